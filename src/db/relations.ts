// The relations several areas join the same way, and the provider side's visibility of rows
// joined with their offering: each declared once, for the repositories that share them.
import type { SelectQueryBuilder } from 'kysely'
import { unlessAll } from './joins.js'
import { inAnyOf } from './sql.js'

/** The offering of a marketplace resource. */
export const OFFERING_OF_RESOURCE = ['inner', 'offerings', 'resources.offering_id'] as const
/** The joins of an offering's provider organization and of its category (a query joining `offerings`). */
export const PROVIDER_OF_OFFERING = ['inner', 'customers as provider', 'offerings.customer_id'] as const
export const CATEGORY_OF_OFFERING = ['left', 'categories', 'offerings.category_id'] as const

/**
 * Staff and support see everything; the provider side the rows of offerings of its organizations
 * (customer roles) and of the offerings it holds a role on.
 */
export type ProviderVisibility = { all: true } | { all: false; customerIds: number[]; offeringIds: number[] }

/** `visible(scope)` of rows joined with their `offerings`, seen by the provider side (`ProviderVisibility`). */
export function visibleToProvider<Q extends SelectQueryBuilder<any, any, any>>(base: () => Q) {
  return unlessAll(
    base,
    (q, vis: { customerIds: number[]; offeringIds: number[] }): Q =>
      q.where((eb) =>
        inAnyOf(eb, [
          ['offerings.customer_id', vis.customerIds],
          ['offerings.id', vis.offeringIds],
        ]),
      ) as Q,
  )
}

/**
 * Staff and support see everything; others the rows of the resources they see from either side:
 * a project role in the resource's project, a customer role in its organization or in its
 * offering's, a role on its offering.
 */
export type ResourceSidesVisibility =
  { all: true } | { all: false; projectIds: number[]; customerIds: number[]; offeringIds: number[] }

/**
 * `visible(scope)` of rows joined with their `resources`, the resource's `projects` and
 * `offerings`, seen from either side (`ResourceSidesVisibility`).
 */
export function visibleToResourceSides<Q extends SelectQueryBuilder<any, any, any>>(base: () => Q) {
  return unlessAll(
    base,
    (q, vis: { projectIds: number[]; customerIds: number[]; offeringIds: number[] }): Q =>
      q.where((eb) =>
        inAnyOf(eb, [
          ['resources.project_id', vis.projectIds],
          ['projects.customer_id', vis.customerIds],
          ['offerings.customer_id', vis.customerIds],
          ['resources.offering_id', vis.offeringIds],
        ]),
      ) as Q,
  )
}
