// Who may see what in the catalog (→ 404) and do what (→ 403). Pure functions over the actor's
// grants.
import {
  can,
  canAsProvider,
  connectedCustomerIds,
  customerIds,
  hasRole,
  offeringIds,
  projectIds,
  seesAll,
  seesAsProvider,
  type Actor,
  type OfferingRef,
} from '../../http/permissions.js'
import type { CatalogVisibility } from './repository.js'

/** What the actor may see in the catalog. */
export function catalogVisibility(actor: Actor): CatalogVisibility {
  if (seesAll(actor)) return { all: true }
  return {
    all: false,
    customerIds: customerIds(actor),
    connectedCustomerIds: connectedCustomerIds(actor),
    projectIds: projectIds(actor),
    offeringIds: offeringIds(actor),
  }
}

/** Making a customer a service provider (and editing or removing that): staff or its owner. */
export function canManageProvider(actor: Actor, customerId: number): boolean {
  return actor.isStaff || hasRole(actor, ['CUSTOMER.OWNER'], { customerId })
}

/** Categories are written by staff only. */
export function canWriteCategories(actor: Actor): boolean {
  return actor.isStaff
}

/** Creating an offering of a provider: staff, owners and service provider managers. */
export function canCreateOffering(actor: Actor, customerId: number): boolean {
  return can(actor, 'OFFERING.CREATE', { customerId })
}

/**
 * Editing an offering, its plans and its state: `OFFERING.UPDATE` on the provider (owner,
 * service provider manager) or on the offering itself (offering manager); staff always.
 */
export function canUpdateOffering(actor: Actor, o: OfferingRef): boolean {
  return canAsProvider(actor, 'OFFERING.UPDATE', o)
}

/** Deleting a (Draft) offering: staff or an owner of the provider. */
export function canDeleteOffering(actor: Actor, o: OfferingRef): boolean {
  return actor.isStaff || hasRole(actor, ['CUSTOMER.OWNER'], { customerId: o.customer_id })
}

/**
 * Granting and revoking offering managers: `OFFERING.UPDATE` held on the provider organization
 * (owner, service provider manager, staff); an offering manager cannot appoint peers.
 */
export function canManageOfferingUsers(actor: Actor, o: OfferingRef): boolean {
  return can(actor, 'OFFERING.UPDATE', { customerId: o.customer_id })
}

/** Reading who manages an offering: staff, support, the provider's people, its managers. */
export function canListOfferingUsers(actor: Actor, o: OfferingRef): boolean {
  return seesAsProvider(actor, o)
}
