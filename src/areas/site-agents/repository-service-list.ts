// The services' list: the agents poll it, so its count and page queries are compiled once per
// form of filters and reused, and the count of stale services is kept between requests (on
// PostgreSQL read with the page, in one statement).
import { sql } from 'kysely'
import {
  anyOf,
  applyConditions,
  formOf,
  reusable,
  reusableByForm,
  slot,
  type Condition,
} from '../../db/compiled.js'
import { EpochCache } from '../../db/epochs.js'
import { isPostgres } from '../../db/sql.js'
import { serviceColumns, services, type AgentScope, type Db, type ServiceRow } from './repository.js'

const MODIFIED = 'site_agent_services.modified'

export interface ServiceFilters {
  identity_uuid?: string
  mode?: string
  modified_after?: string
  modified_before?: string
  stale?: boolean
  states?: number[]
}

const serviceCountOf = reusableByForm()
const servicePageOf = reusableByForm()

/** `site_agent_services.modified <op> value`, a condition of the form `form`. */
function modifiedIs(form: string, op: '<' | '>' | '>=', value: string | null): Condition<any> {
  return { form, values: [value], apply: (q, [s]) => q.where(MODIFIED, op, s) }
}

/**
 * The count of the services meeting these conditions (`plain` ones read the service alone), their
 * slots numbered from `from`.
 */
function serviceCount(db: Db, plain: boolean, counted: Condition<any>[], from = 0) {
  return applyConditions<any>(
    plain ? db.selectFrom('site_agent_services') : services(db),
    counted,
    from,
  ).select((eb: any) => eb.fn.countAll().as('n'))
}

/**
 * A page of the services meeting these conditions, oldest first: the conditions' slots numbered
 * from `from`, then the limit's and the offset's.
 */
function servicePage(db: Db, conditions: Condition<any>[], from = 0) {
  const at = from + formOf(conditions).values.length
  return applyConditions<any>(services(db), conditions, from)
    .select(serviceColumns)
    .orderBy('site_agent_services.created')
    .orderBy('site_agent_services.id')
    .limit(slot<number>(at))
    .offset(slot<number>(at + 1))
}

/** The number of services meeting these conditions: `plain` ones read the service alone. */
async function countServices(db: Db, plain: boolean, counted: Condition<any>[]): Promise<number> {
  const { form, values } = formOf(counted)
  const build = () => serviceCount(db, plain, counted)
  const key = `${plain ? 'services' : 'joined'}/${form}`
  return Number((await serviceCountOf<{ n: number | string }>(db, key, build, values)).rows[0]!.n)
}

/** A total of stale services, and the time services had to be modified before to count in it. */
interface StaleTotal {
  before: string
  n: number
}

const staleTotals = new EpochCache<StaleTotal>(['site_agent_services'], 64)

/** The key of the stale totals kept for these filters of the service's own. */
function staleKey(own: Condition<any>[]): string {
  const { form, values } = formOf(own)
  return `${form}/${JSON.stringify(values)}`
}

/**
 * The services (of those meeting `own`) modified before `before` and, when `from` is given, from
 * `from` on (a null `from` is a value still: the condition is there, its value to come later).
 */
function staleRange(own: Condition<any>[], before: string, from?: string | null): Condition<any>[] {
  return [
    ...own,
    ...(from === undefined ? [] : [modifiedIs('stale-from', '>=', from)]),
    modifiedIs('stale', '<', before),
  ]
}

/**
 * SQLite: the number of services (of those meeting `own`, the service's own filters) modified
 * before `before`. While no service has been written since the last total, the services that went
 * stale since it are counted and added to it, a few index entries instead of every stale service.
 */
async function staleTotal(db: Db, own: Condition<any>[], before: string): Promise<number> {
  const { kept, keep } = await staleTotals.open(db, staleKey(own))
  const n =
    kept && kept.before <= before
      ? kept.n + (await countServices(db, true, staleRange(own, before, kept.before)))
      : await countServices(db, true, staleRange(own, before))
  keep({ before, n })
  return n
}

/** A stale total's row (PostgreSQL): the epoch `e0`, the total, and on a page the service's columns. */
type StaleRow = { e0: unknown; stale_total: number | string } & {
  [K in keyof ServiceRow]: ServiceRow[K] | null
}

/**
 * PostgreSQL: the stale total and the epoch it holds at, in one statement. While the epoch is
 * still that of the total kept (slots 0 and 1: its epoch and total), that total plus the services
 * that went stale since (`since`, counted from the time the total was counted to), else every
 * stale service counted (`all`): a CASE counts only for the branch it takes. One statement sees
 * one snapshot, so the total is kept at an epoch read in the snapshot it was counted in, and a
 * kept total is used only when no service was written between its snapshot and this one (a write
 * committed after this statement started is in the next request's epoch). With `paged`, the page
 * of services meeting `all` (its limit and offset the last two slots) is joined to that one row,
 * so the total costs no statement of its own and agrees with the page; an empty page leaves one
 * row, its service columns null. Without it (the last page, HEAD: the total comes first) the page
 * is a later statement, a later snapshot under READ COMMITTED, as any list's is after its count.
 */
function staleTotalStatement(db: Db, since: Condition<any>[], all: Condition<any>[], paged: boolean) {
  const kept = slot(staleTotals.size)
  const sinceAt = staleTotals.size + 1
  const allAt = sinceAt + formOf(since).values.length
  const total = sql<number>`case when ${staleTotals.held(0)}
    then cast(${kept} as bigint) + ${serviceCount(db, true, since, sinceAt)}
    else ${serviceCount(db, true, all, allAt)} end`
  const q = staleTotals.from(db).select(total.as('stale_total'))
  if (!paged) return q
  const page = servicePage(db, all, allAt + formOf(all).values.length)
  return q
    .leftJoin(page.as('p'), (join: any) => join.onTrue())
    .selectAll('p')
    .orderBy('p.created')
    .orderBy('p.id')
}

const staleTotalsOf = reusableByForm()

/**
 * PostgreSQL: the stale total of the services meeting `own` (see `staleTotalStatement`), kept at
 * the epoch read with it; with a page (limit and offset), that page of services too.
 */
async function staleTotalWith(
  db: Db,
  own: Condition<any>[],
  before: string,
  page?: { limit: number; offset: number },
): Promise<{ total: number; rows: ServiceRow[] }> {
  const key = staleKey(own)
  const kept = staleTotals.kept(db, key)
  // A total counted to a later time (the clock set back) is not carried: everything is counted.
  const carried = kept && kept.value.before <= before ? kept : undefined
  const since = staleRange(own, before, carried?.value.before ?? null)
  const all = staleRange(own, before)
  const params = [
    ...staleTotals.heldParams(carried),
    carried?.value.n ?? null,
    ...formOf(since).values,
    ...formOf(all).values,
    ...(page ? [...formOf(all).values, page.limit, page.offset] : []),
  ]
  const build = () => staleTotalStatement(db, since, all, page !== undefined)
  const form = `${page ? 'page' : 'total'}/${formOf(own).form}`
  const { rows } = await staleTotalsOf<StaleRow>(db, form, build, params)
  const first = rows[0]!
  const total = Number(first.stale_total)
  staleTotals.keep(db, key, staleTotals.versionOf(first), { before, n: total })
  const listed = rows
    .filter((r) => r.id !== null)
    .map(({ e0: _epoch, stale_total: _total, ...row }) => row as ServiceRow)
  return { total, rows: listed }
}

/**
 * The services a scope sees that meet the filters (`staleBefore`: services modified before it are
 * stale): their count, and a page of them oldest first.
 */
export function serviceList(db: Db, scope: AgentScope, f: ServiceFilters, staleBefore: string) {
  // The filters on the service's own columns, then those that need its identity and offering.
  const own: Condition<any>[] = []
  if (f.mode !== undefined) {
    own.push({
      form: 'mode',
      values: [f.mode],
      apply: (q, [s]) => q.where('site_agent_services.mode', '=', s),
    })
  }
  if (f.modified_after) own.push(modifiedIs('modified-after', '>', f.modified_after))
  if (f.modified_before) own.push(modifiedIs('modified-before', '<', f.modified_before))
  if (f.stale === false) own.push(modifiedIs('fresh', '>=', staleBefore))
  if (f.states?.length) {
    own.push({
      form: `states:${f.states.length}`,
      values: f.states,
      apply: (q, s) => q.where('site_agent_services.state', 'in', s),
    })
  }
  // The service's own filters but the stale rule (see staleTotal).
  const notStale = [...own]
  if (f.stale === true) own.push(modifiedIs('stale', '<', staleBefore))
  const joined: Condition<any>[] = [...own]
  if (f.identity_uuid) {
    joined.unshift({
      form: 'identity',
      values: [f.identity_uuid],
      apply: (q, [s]) => q.where('site_agent_identities.uuid', '=', s),
    })
  }
  if (scope) joined.unshift(anyOf('visible', scope))
  // Whoever sees every service counts them without the joins (the filters are the service's own).
  const plain = !scope && !f.identity_uuid
  // The stale total of every service is kept (see staleTotal, staleTotalWith).
  const keptTotal = plain && f.stale === true
  const pg = isPostgres(db)
  return {
    count(): Promise<number> {
      if (keptTotal && pg) return staleTotalWith(db, notStale, staleBefore).then((r) => r.total)
      if (keptTotal) return staleTotal(db, notStale, staleBefore)
      return countServices(db, plain, plain ? own : joined)
    },
    /**
     * PostgreSQL, the kept stale total: a page and the total in one statement (see
     * staleTotalWith), so the total costs no round trip; undefined for other lists.
     */
    counted:
      keptTotal && pg
        ? (limit: number, offset: number) => staleTotalWith(db, notStale, staleBefore, { limit, offset })
        : undefined,
    async rows(limit: number, offset: number): Promise<ServiceRow[]> {
      const { form, values } = formOf(joined)
      const build = () => servicePage(db, joined)
      return (await servicePageOf<ServiceRow>(db, form, build, [...values, limit, offset])).rows
    },
  }
}

const nextStaleOf = reusable((db: Db) =>
  db
    .selectFrom('site_agent_services')
    .select((eb) => eb.fn.min('modified').as('m'))
    .where('modified', '>=', slot<string>(0)),
)

/**
 * When the next service goes stale: the earliest `modified` of the services not stale at
 * `staleBefore` (one is stale once the time services had to be modified before passes it), or
 * null when every service is stale (none goes stale without a write).
 */
export async function nextStale(db: Db, staleBefore: string): Promise<string | null> {
  const m = (await nextStaleOf(db, [], [staleBefore])).rows[0]?.m
  return m === null || m === undefined ? null : String(m)
}
