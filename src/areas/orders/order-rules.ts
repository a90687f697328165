// What every order use case reads of an order: who may see it (and the 404 otherwise), the scopes
// its permissions are checked in, its offering type's rules, today's date and a plan's cost.
import Big from 'big.js'
import type { Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'
import { decimalNumber } from '../../db/values.js'
import { notFound } from '../../http/errors.js'
import { resourceSidesVisibility, type Actor, type Scopes, type ScopeType } from '../../http/permissions.js'
import { normalizeUuid } from '../../http/uuid.js'
import { OFFERING_TYPE_RULES, isOfferingType, type OfferingTypeRules } from '../catalog/offering-types.js'
import { ordersRepository, type OrderRow, type OrderVisibility } from './repository.js'

export type Trx = Transaction<DB>

export const ORDER_NOT_FOUND = 'No Order matches the given query.'

/** Orders are seen as resources are: from the consumer's side (project, organization) or the provider's (offering). */
export const orderVisibility: (actor: Actor) => OrderVisibility = resourceSidesVisibility

export function rulesOf(type: string): OfferingTypeRules | null {
  return isOfferingType(type) ? OFFERING_TYPE_RULES[type] : null
}

/** Unit price plus fixed price, added in decimal (0.1 + 0.2 is 0.3, not 0.30000000000000004). */
export function planCost(unitPrice: unknown, fixedPrice: unknown): number | null {
  const u = decimalNumber(unitPrice)
  const f = decimalNumber(fixedPrice)
  if (u === null && f === null) return null
  // Whole prices add exactly as doubles; Big (a string parse each) only for fractions.
  const sum = (u ?? 0) + (f ?? 0)
  if (Number.isSafeInteger(u ?? 0) && Number.isSafeInteger(f ?? 0) && Number.isSafeInteger(sum)) return sum
  return new Big(u ?? 0).plus(f ?? 0).toNumber()
}

export async function findVisible(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  db: AppContext['db'] | Trx = ctx.db,
): Promise<OrderRow> {
  const id = normalizeUuid(uuid)
  const row = id ? await ordersRepository(db).findVisibleByUuid(orderVisibility(actor), id) : undefined
  if (!row) throw notFound(ORDER_NOT_FOUND)
  return row
}

export function today(ctx: AppContext): string {
  return ctx.clock().toISOString().slice(0, 10)
}

/** The order's column that holds each scope of one side: what a grant on that scope reaches. */
export type ScopeColumns = Partial<
  Record<ScopeType, 'customer_id' | 'project_id' | 'provider_customer_id' | 'offering_id'>
>

/** The consumer's side: the organization and the project. */
export const CONSUMER_SCOPES = {
  customer: 'customer_id',
  project: 'project_id',
} as const satisfies ScopeColumns
/** The provider's side: the provider's organization and the offering. */
export const PROVIDER_SCOPES = {
  customer: 'provider_customer_id',
  offering: 'offering_id',
} as const satisfies ScopeColumns

/** The order's scopes on one side, as `can` takes them. */
export function scopesOn(
  columns: ScopeColumns,
  o: Pick<OrderRow, NonNullable<ScopeColumns[ScopeType]>>,
): Scopes {
  return {
    customerId: columns.customer ? o[columns.customer] : null,
    projectId: columns.project ? o[columns.project] : null,
    offeringId: columns.offering ? o[columns.offering] : null,
  }
}

export const consumerScopes = (o: OrderRow) => scopesOn(CONSUMER_SCOPES, o)
export const providerScopes = (o: OrderRow) => scopesOn(PROVIDER_SCOPES, o)
