// The order records as JSON text: rendered by the database, completed with the decimal fields,
// and kept in the app's record cache while unchanged (the list and retrieve are the hot path).
import type { AppContext } from '../../context.js'
import { decimalNumber, decimalString } from '../../db/values.js'
import { notFound } from '../../http/errors.js'
import { seesAll, type Actor } from '../../http/permissions.js'
import { normalizeUuid } from '../../http/uuid.js'
import { RecordCache } from '../../db/record-cache.js'
import type { MetricCounter } from '../../http/plumbing.js'
import type { OrderTerm } from '../../http/query.js'
import type { JsonPager } from '../../http/resource.js'
import { orderFilters, type OrderFilterValues } from './list-filters.js'
import { ordersRepository, type JsonRender, type OrderJsonRow, type OrderVersion } from './repository.js'
import { ORDER_NOT_FOUND, orderVisibility, planCost } from './order-rules.js'

/** Links start with `base`; error tracebacks are shown to staff and support only. */
export function jsonRender(base: string, actor: Actor): JsonRender {
  return { base: JSON.stringify(base).slice(1, -1), traceback: seesAll(actor) }
}

/**
 * The JSON text of an order record: rendered by the database (`recordJson` in the repository),
 * completed here with the decimal fields.
 */
export function toOrderJson(r: OrderJsonRow): string {
  const isUpdate = r.type === 'Update' && r.old_plan_id !== null
  const j = JSON.stringify
  const oldCost = isUpdate ? planCost(r.old_plan_unit_price, r.old_plan_fixed_price) : null
  const newCost = isUpdate ? decimalString(planCost(r.plan_unit_price, r.plan_fixed_price)) : null
  return (
    `${r.json},"old_cost_estimate":${j(oldCost)},"new_cost_estimate":${j(newCost)}` +
    `,"cost":${j(decimalString(r.cost))},"fixed_price":${j(decimalNumber(r.plan_fixed_price))}` +
    `,"activation_price":${j(decimalNumber(r.plan_activation_price))}}`
  )
}

const recordCaches = new WeakMap<AppContext, RecordCache>()

function recordCache(ctx: AppContext): RecordCache {
  let cache = recordCaches.get(ctx)
  if (!cache) recordCaches.set(ctx, (cache = new RecordCache(ctx.config.orderRecordCacheSize)))
  return cache
}

/** The record cache's counters, for /metrics. */
export function orderRecordCounters(ctx: AppContext): MetricCounter[] {
  return [
    {
      name: 'order_record_cache_hits_total',
      help: 'Order records answered from the in-process cache (ORDER_RECORD_CACHE_SIZE)',
      value: () => recordCache(ctx).hits,
    },
    {
      name: 'order_record_cache_misses_total',
      help: 'Order records rendered by the database: not kept, or changed since they were',
      value: () => recordCache(ctx).misses,
    },
  ]
}

/** The records of these orders as JSON text, from the app's record cache where unchanged. */
async function records(ctx: AppContext, rows: OrderVersion[], render: JsonRender): Promise<string[]> {
  const cache = recordCache(ctx)
  const prefix = `${render.traceback ? 't' : 'f'}${render.base}|`
  const out = rows.map((r) => cache.get(prefix + r.id, r.version))
  const missing = rows.filter((_, i) => out[i] === undefined)
  if (missing.length) {
    const rendered = await ordersRepository(ctx.db).render(
      missing.map((r) => r.id),
      render,
    )
    const byId = new Map(rendered.map((r) => [r.id, toOrderJson(r)]))
    rows.forEach((r, i) => {
      const text = out[i] === undefined ? byId.get(r.id) : undefined
      if (text === undefined) return
      cache.set(prefix + r.id, r.version, text)
      out[i] = text
    })
  }
  // An order deleted since its page was picked is left out.
  return out.filter((text): text is string => text !== undefined)
}

/** A page of order records as JSON text. */
export async function listOrders(
  ctx: AppContext,
  actor: Actor,
  values: OrderFilterValues,
  order: readonly OrderTerm[],
  base: string,
  page: JsonPager,
): Promise<string> {
  let f = orderFilters(actor, values)
  const repo = ordersRepository(ctx.db)
  const vis = orderVisibility(actor)
  const render = jsonRender(base, actor)
  if (f.query) f = { ...f, query: { ...f.query, matches: await repo.matchQuery(f.query.text, f.query.uuid) } }
  return page(
    () => repo.count(vis, f),
    async (l, o) => records(ctx, await repo.page(vis, f, [...order], l, o), render),
  )
}

/** One order record as JSON text, when the caller may see it. */
export async function getOrder(ctx: AppContext, actor: Actor, uuid: string, base: string): Promise<string> {
  const id = normalizeUuid(uuid)
  const row = id
    ? await ordersRepository(ctx.db).findVisibleVersionByUuid(orderVisibility(actor), id)
    : undefined
  const text = row ? (await records(ctx, [row], jsonRender(base, actor)))[0] : undefined
  if (text === undefined) throw notFound(ORDER_NOT_FOUND)
  return text
}

/** The record of an order just written by this caller, as JSON text. */
export async function orderRecord(ctx: AppContext, actor: Actor, id: number, base: string): Promise<string> {
  return toOrderJson((await ordersRepository(ctx.db).findJsonById(id, jsonRender(base, actor)))!)
}
