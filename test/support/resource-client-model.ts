// What the reference's generated Python client (its `Resource` and `ProjectUser` models, which the
// site agent parses every resource and team member with) requires of a record, field by field:
// a field it parses as a UUID, a date-time, an enum or an object raises on null or on anything
// else, so each such field must be absent (where the model allows) or hold a value of its kind.
import assert from 'node:assert/strict'

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i
const DATE = /^\d{4}-\d{2}-\d{2}$/

type Kind =
  | 'uuid'
  | 'uuid?'
  | 'datetime'
  | 'datetime?'
  | 'date?'
  | 'object'
  | 'object?'
  | 'list'
  | 'bool'
  | { enum: readonly string[]; nullable?: boolean }

/** The `Resource` model's parsed fields (absent is always allowed: the model marks them Unset). */
const RESOURCE: Record<string, Kind> = {
  uuid: 'uuid',
  offering_uuid: 'uuid',
  provider_uuid: 'uuid',
  category_uuid: 'uuid',
  project_uuid: 'uuid',
  customer_uuid: 'uuid',
  parent_offering_uuid: 'uuid',
  parent_uuid: 'uuid',
  service_settings_uuid: 'uuid',
  plan_uuid: 'uuid?',
  resource_uuid: 'uuid?',
  created: 'datetime',
  modified: 'datetime',
  last_sync: 'datetime',
  end_date_updated_at: 'datetime?',
  end_date: 'date?',
  project_end_date: 'date?',
  project_effective_end_date: 'date?',
  resource_effective_end_date: 'date?',
  offering_plugin_options: 'object',
  attributes: 'object',
  limits: 'object',
  backend_metadata: 'object',
  current_usages: 'object',
  limit_usage: 'object',
  options: 'object?',
  renewal_date: 'object?',
  order_in_progress: 'object?',
  creation_order: 'object?',
  endpoints: 'list',
  report: 'list',
  available_actions: 'list',
  offering_components: 'list',
  offering_shared: 'bool',
  offering_billable: 'bool',
  is_usage_based: 'bool',
  is_limit_based: 'bool',
  can_terminate: 'bool',
  paused: 'bool',
  downscaled: 'bool',
  restrict_member_access: 'bool',
  state: { enum: ['Creating', 'OK', 'Erred', 'Updating', 'Terminating', 'Terminated'] },
  offering_state: { enum: ['Draft', 'Active', 'Paused', 'Archived', 'Unavailable'] },
  plan_unit: { enum: ['month', 'quarter', 'half_month', 'day', 'hour', 'quantity'], nullable: true },
  usage_limit_restriction: { enum: ['', 'paused', 'downscaled'] },
}

/** The `ProjectUser` model's parsed fields. */
const PROJECT_USER: Record<string, Kind> = { uuid: 'uuid', expiration_time: 'datetime?' }

function check(where: string, field: string, kind: Kind, v: unknown): void {
  const at = `${where}.${field}`
  if (typeof kind === 'object') {
    if (v === null) return assert.ok(kind.nullable, `${at} is null`)
    return assert.ok(kind.enum.includes(v as string), `${at}: ${JSON.stringify(v)} is not one of the enum`)
  }
  const nullable = kind.endsWith('?')
  if (v === null) return assert.ok(nullable, `${at} is null`)
  switch (kind.replace('?', '')) {
    case 'uuid':
      return assert.match(String(v), UUID, at)
    case 'datetime':
      return assert.ok(typeof v === 'string' && !Number.isNaN(Date.parse(v)), `${at}: ${String(v)}`)
    case 'date':
      return assert.match(String(v), DATE, at)
    case 'object':
      return assert.ok(typeof v === 'object' && !Array.isArray(v), `${at} is not an object`)
    case 'list':
      return assert.ok(Array.isArray(v), `${at} is not a list`)
    case 'bool':
      return assert.equal(typeof v, 'boolean', at)
  }
}

/** Asserts that the reference's client would parse this resource record. */
export function assertClientParsesResource(record: Record<string, unknown>): void {
  for (const [field, kind] of Object.entries(RESOURCE)) {
    if (field in record) check('resource', field, kind, record[field])
  }
  for (const e of (record.endpoints as Record<string, unknown>[] | undefined) ?? []) {
    check('endpoint', 'uuid', 'uuid', e.uuid)
  }
}

/** Asserts that the reference's client would parse this team member. */
export function assertClientParsesProjectUser(member: Record<string, unknown>): void {
  for (const key of [
    'url',
    'uuid',
    'username',
    'full_name',
    'role',
    'expiration_time',
    'offering_user_username',
    'offering_user_state',
  ]) {
    assert.ok(key in member, `project user.${key} is required`)
  }
  for (const [field, kind] of Object.entries(PROJECT_USER)) check('project user', field, kind, member[field])
  const state = member.offering_user_state
  if (state !== null) assert.equal(typeof state, 'string')
}
