// The one permission module: which role holds which permission, and "may this actor do X on
// this scope". Role → permission mapping is data, after the reference's default role set:
// customer owners (and staff) approve for the consumer side; project admins and managers may
// create orders but do not approve them.

import { forbidden } from './errors.js'
import type { ProviderVisibility, ResourceSidesVisibility } from '../db/relations.js'

export const ROLE_NAMES = [
  'CUSTOMER.OWNER',
  'CUSTOMER.MANAGER',
  'CUSTOMER.SUPPORT',
  'PROJECT.ADMIN',
  'PROJECT.MANAGER',
  'PROJECT.MEMBER',
  'OFFERING.MANAGER',
] as const
export type RoleName = (typeof ROLE_NAMES)[number]

export type ScopeType = 'customer' | 'project' | 'offering'

export const ROLE_SCOPE: Record<RoleName, ScopeType> = {
  'CUSTOMER.OWNER': 'customer',
  'CUSTOMER.MANAGER': 'customer',
  'CUSTOMER.SUPPORT': 'customer',
  'PROJECT.ADMIN': 'project',
  'PROJECT.MANAGER': 'project',
  'PROJECT.MEMBER': 'project',
  'OFFERING.MANAGER': 'offering',
}

export const PERMISSIONS = [
  // directory
  'CUSTOMER.UPDATE',
  'CUSTOMER.CREATE_PERMISSION',
  'PROJECT.CREATE',
  'PROJECT.UPDATE',
  'PROJECT.DELETE',
  'PROJECT.CREATE_PERMISSION',
  // orders
  'ORDER.LIST',
  'ORDER.CREATE',
  'ORDER.APPROVE',
  'ORDER.APPROVE_PRIVATE',
  'ORDER.REJECT',
  'ORDER.CANCEL',
  'ORDER.DESTROY',
  // provider side
  'OFFERING.CREATE',
  'OFFERING.UPDATE',
  'OFFERING.MANAGE_BACKEND_RESOURCES',
  'OFFERING.MANAGE_POLICIES',
  // offering users: a user's account on an offering, and its per-user component limits
  'OFFERING.CREATE_USER',
  'OFFERING.UPDATE_USER',
  'OFFERING.DELETE_USER',
  'OFFERINGUSER.UPDATE_RESTRICTION',
  // cloud resources
  'RESOURCE.MANAGE',
  // per-user limits of a resource's components
  'RESOURCE.CONSUMPTION_LIMITATION',
  // marketplace resources, provider side
  'RESOURCE.SET_BACKEND_ID',
  'RESOURCE.SET_STATE',
  'RESOURCE.SET_BACKEND_METADATA',
  'RESOURCE.SET_END_DATE',
  // reported usage of a resource's components
  'RESOURCE.SET_USAGE',
] as const
export type Permission = (typeof PERMISSIONS)[number]

/** The provider side's care of its offerings' user accounts. */
const OFFERING_USER_CARE: readonly Permission[] = [
  'OFFERING.CREATE_USER',
  'OFFERING.UPDATE_USER',
  'OFFERING.DELETE_USER',
  'OFFERINGUSER.UPDATE_RESTRICTION',
]

/** What the provider side reports on its offerings' resources (the site agent's calls). */
const RESOURCE_PROVIDER: readonly Permission[] = [
  'RESOURCE.SET_BACKEND_ID',
  'RESOURCE.SET_STATE',
  'RESOURCE.SET_BACKEND_METADATA',
  'RESOURCE.SET_END_DATE',
  'RESOURCE.SET_USAGE',
]

/** The project admin: grants project roles, orders and manages the project's resources. */
const PROJECT_ADMIN: readonly Permission[] = [
  'PROJECT.CREATE_PERMISSION',
  'ORDER.LIST',
  'ORDER.CREATE',
  'ORDER.CANCEL',
  'ORDER.DESTROY',
  'RESOURCE.MANAGE',
]

export const ROLE_PERMISSIONS: Record<RoleName, readonly Permission[]> = {
  // The organization's owner holds every permission.
  'CUSTOMER.OWNER': PERMISSIONS,
  // The service provider manager: runs the provider side of the organization's offerings.
  'CUSTOMER.MANAGER': [
    'ORDER.LIST',
    'ORDER.APPROVE',
    'ORDER.REJECT',
    'OFFERING.CREATE',
    'OFFERING.UPDATE',
    'OFFERING.MANAGE_BACKEND_RESOURCES',
    ...OFFERING_USER_CARE,
    ...RESOURCE_PROVIDER,
  ],
  'CUSTOMER.SUPPORT': ['ORDER.LIST'],
  'PROJECT.ADMIN': PROJECT_ADMIN,
  // The project manager: what the project admin may do, and update the project.
  'PROJECT.MANAGER': ['PROJECT.UPDATE', ...PROJECT_ADMIN, 'RESOURCE.CONSUMPTION_LIMITATION'],
  'PROJECT.MEMBER': ['ORDER.LIST', 'ORDER.CREATE'],
  'OFFERING.MANAGER': [
    'ORDER.LIST',
    'ORDER.APPROVE',
    'ORDER.REJECT',
    'OFFERING.UPDATE',
    'OFFERING.MANAGE_BACKEND_RESOURCES',
    'OFFERING.MANAGE_POLICIES',
    ...OFFERING_USER_CARE,
    ...RESOURCE_PROVIDER,
  ],
}

export interface Grant {
  role: RoleName
  scopeType: ScopeType
  scopeId: number
  /** For project grants: the project's customer, so customer-wide checks can see them. */
  customerId: number | null
}

export interface Actor {
  id: number
  uuid: string
  username: string
  fullName: string
  email: string
  civilNumber: string | null
  isStaff: boolean
  isSupport: boolean
  affiliations: string[]
  identitySource: string
  image: string | null
  grants: Grant[]
}

/** Scopes a check may be satisfied on: a grant on any of them that holds the permission counts. */
export interface Scopes {
  customerId?: number | null
  projectId?: number | null
  offeringId?: number | null
}

function grantMatches(g: Grant, s: Scopes): boolean {
  switch (g.scopeType) {
    case 'customer':
      return s.customerId != null && g.scopeId === s.customerId
    case 'project':
      return s.projectId != null && g.scopeId === s.projectId
    case 'offering':
      return s.offeringId != null && g.scopeId === s.offeringId
  }
}

/** May this actor do `permission` on any of these scopes? Staff always may. */
export function can(actor: Actor | null, permission: Permission, scopes: Scopes): boolean {
  if (!actor) return false
  if (actor.isStaff) return true
  return actor.grants.some((g) => grantMatches(g, scopes) && ROLE_PERMISSIONS[g.role].includes(permission))
}

/**
 * `can` as SQL (PostgreSQL): true where the row's scope columns (`scopes`: an SQL expression for
 * each scope the row has) hold one of the scopes the actor's grants give `permission` on; `param`
 * gives a value its placeholder. Staff always may.
 */
export function canSql(
  actor: Actor,
  permission: Permission,
  scopes: Partial<Record<ScopeType, string>>,
  param: (value: unknown) => string,
): string {
  if (actor.isStaff) return 'true'
  const granted = scopesWith(actor, permission)
  const any = (Object.keys(granted) as ScopeType[]).flatMap((scope) => {
    const column = scopes[scope]
    return column && granted[scope].length ? [`${column} = any(${param(granted[scope])}::int[])`] : []
  })
  return any.length ? any.join(' or ') : 'false'
}

/** Does the actor hold one of these roles on any of these scopes (staff not implied)? */
export function hasRole(actor: Actor | null, roles: readonly RoleName[], scopes: Scopes): boolean {
  if (!actor) return false
  return actor.grants.some((g) => grantMatches(g, scopes) && roles.includes(g.role))
}

/** Staff only: anyone else gets 403. */
export function requireStaff(actor: Actor): void {
  if (!actor.isStaff) throw forbidden()
}

/** Staff and global support read everything. */
export function seesAll(actor: Actor | null): boolean {
  return !!actor && (actor.isStaff || actor.isSupport)
}

/** Customers where the actor holds a customer role ("connected customers"). */
export function customerIds(actor: Actor, roles?: readonly RoleName[]): number[] {
  return unique(
    actor.grants
      .filter((g) => g.scopeType === 'customer' && (!roles || roles.includes(g.role)))
      .map((g) => g.scopeId),
  )
}

/** Projects where the actor holds a project role. */
export function projectIds(actor: Actor, roles?: readonly RoleName[]): number[] {
  return unique(
    actor.grants
      .filter((g) => g.scopeType === 'project' && (!roles || roles.includes(g.role)))
      .map((g) => g.scopeId),
  )
}

/** Offerings where the actor holds an offering role. */
export function offeringIds(actor: Actor, roles?: readonly RoleName[]): number[] {
  return unique(
    actor.grants
      .filter((g) => g.scopeType === 'offering' && (!roles || roles.includes(g.role)))
      .map((g) => g.scopeId),
  )
}

/** Customers the actor is connected to through a customer role or a project role in it. */
export function connectedCustomerIds(actor: Actor): number[] {
  return unique([
    ...customerIds(actor),
    ...actor.grants
      .filter((g) => g.scopeType === 'project' && g.customerId != null)
      .map((g) => g.customerId!),
  ])
}

/** Scope ids (by type) where the actor holds a role that grants `permission`. */
export function scopesWith(actor: Actor, permission: Permission): Record<ScopeType, number[]> {
  const out: Record<ScopeType, number[]> = { customer: [], project: [], offering: [] }
  for (const g of actor.grants)
    if (ROLE_PERMISSIONS[g.role].includes(permission)) out[g.scopeType].push(g.scopeId)
  return { customer: unique(out.customer), project: unique(out.project), offering: unique(out.offering) }
}

/** An offering as the provider side's checks read it: its id and its provider organization's. */
export interface OfferingRef {
  id: number
  customer_id: number
}

/**
 * May the actor do `permission` as the offering's provider side: through a role in the
 * offering's organization (owners, service provider managers) or on the offering (its managers)
 * that holds it; staff always.
 */
export function canAsProvider(actor: Actor, permission: Permission, offering: OfferingRef): boolean {
  return can(actor, permission, { customerId: offering.customer_id, offeringId: offering.id })
}

function unique(xs: number[]): number[] {
  return [...new Set(xs)]
}

/**
 * What the provider side sees (the rows `visibleToProvider` gives): staff and support
 * everything; others the rows of offerings of organizations they hold a customer role in, and of
 * offerings they hold a role on.
 */
export function providerVisibility(actor: Actor): ProviderVisibility {
  if (seesAll(actor)) return { all: true }
  return { all: false, customerIds: customerIds(actor), offeringIds: offeringIds(actor) }
}

/** What the actor sees of resources (and what belongs to them) from either side (`visibleToResourceSides`). */
export function resourceSidesVisibility(actor: Actor): ResourceSidesVisibility {
  if (seesAll(actor)) return { all: true }
  return {
    all: false,
    projectIds: projectIds(actor),
    customerIds: customerIds(actor),
    offeringIds: offeringIds(actor),
  }
}

/** Does the actor read as the offering's provider side (what `providerVisibility` lets it see)? */
export function seesAsProvider(actor: Actor, offering: OfferingRef): boolean {
  const vis = providerVisibility(actor)
  return vis.all || vis.customerIds.includes(offering.customer_id) || vis.offeringIds.includes(offering.id)
}
