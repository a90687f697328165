// The one table of exceptions to the reference schema's judgement of a response. Every row says
// which operation or record it covers, what is not judged (or judged more leniently), and why.
// To add one: add a row here with its reason; nothing else in the contract check changes.

export type ContractException =
  /** The response body of this operation (at this status, or any) is not judged at all. */
  | { kind: 'body-not-judged'; operation: string; status?: string; reason: string }
  /** Only these top-level properties of the body are judged; the rest of the schema is ignored. */
  | { kind: 'judged-on'; operation: string; properties: string[]; reason: string }
  /** A required property of this component schema may be null although the schema says otherwise. */
  | { kind: 'null-allowed'; schema: string; properties: string[]; reason: string }
  /** When the request restricts the fields with `field`, absent required properties are not judged. */
  | { kind: 'field-selection'; reason: string }

export const CONTRACT_EXCEPTIONS: ContractException[] = [
  {
    kind: 'body-not-judged',
    operation: 'marketplace_orders_approve_by_consumer',
    reason: 'the spec leaves the body of an approval open ("not shown")',
  },
  {
    kind: 'body-not-judged',
    operation: 'marketplace_orders_approve_by_provider',
    reason: 'the spec leaves the body of an approval open ("not shown")',
  },
  {
    kind: 'judged-on',
    operation: 'marketplace_orders_offering_retrieve',
    properties: ['url', 'uuid'],
    reason: "the spec shows only url and uuid of an order's offering; the rest is not shown",
  },
  {
    kind: 'judged-on',
    operation: 'marketplace_offering_estimated_cost_policies_actions_retrieve',
    properties: ['actions'],
    reason:
      'the spec answers actions/ in the shape of a policy record whose other fields are empty; only actions carries data',
  },
  {
    kind: 'null-allowed',
    schema: 'OfferingEstimatedCostPolicy',
    properties: ['fired_datetime'],
    reason: 'the reference itself sends null until the policy has fired',
  },
  {
    kind: 'null-allowed',
    schema: 'GroupInvitation',
    properties: ['created_by_image', 'created_by_full_name', 'created_by_username'],
    reason: 'the reference itself sends null when the creator has no image or is gone',
  },
  {
    kind: 'null-allowed',
    schema: 'MigrationDetails',
    properties: ['dst_resource_uuid', 'dst_resource_name', 'dst_resource_state'],
    reason: 'the reference itself sends null until the destination resource exists',
  },
  {
    kind: 'null-allowed',
    schema: 'Feedback',
    properties: ['issue_key', 'user_full_name'],
    reason: 'the reference itself sends null for an issue without a key or a user without a name',
  },
  {
    kind: 'field-selection',
    reason:
      'with ?field= the reference returns only the selected properties (its RestrictedSerializerMixin); its schema does not say so',
  },
]
