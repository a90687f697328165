// All SQL of the orders area but the list's conditions (list-conditions.ts) and the record's JSON
// (record-json.ts). A list page is the page's ids and versions, picked on the orders table alone,
// then the records of those orders not already rendered at that version (the service keeps them),
// each rendered as JSON by the database. A total over projects and states only is read from
// order_counts. The use cases decide on the order row alone (`orderRow`).
import { CompiledQuery, sql, type Compilable, type ExpressionBuilder } from 'kysely'
import {
  applyConditions,
  formOf,
  insertReturningId,
  reusable,
  perDatabase,
  reusableByForm,
  slot,
} from '../../db/compiled.js'
import { deleteRow, firstWhere, updateRow } from '../../db/rows.js'
import { isPostgres } from '../../db/sql.js'
import { nextSlugQuery } from '../../db/slugs.js'
import { partColumn, partSplitter, prefixed, type ReadPart, type ReadPartOf } from '../../db/read-parts.js'
import { OUTBOX_COLUMNS, type OutboxRow } from '../events/service.js'
import { newResourcePolicyColumns } from '../cost-policies/service.js'
import { notifiedCaches } from '../../db/change-feed.js'
import { joined, withJoins } from '../../db/joins.js'
import { OFFERING_OF_RESOURCE } from '../../db/relations.js'
import type { OrderTerm } from '../../http/query.js'
import { CONTEXT_BITS, type OrderState } from './state-machine.js'
import {
  conditions,
  MATCH_TABLES,
  matchQuery,
  type OrderFilters,
  type OrderVisibility,
  type OrdersQuery,
  type QueryMatches,
} from './list-conditions.js'
import {
  insertedJson,
  jsonById,
  jsonByIds,
  ORDER_JOINS,
  renderParams,
  type Db,
  type JsonRender,
  type OrderJsonRow,
} from './record-json.js'

export type { OrderFilters, OrderVisibility, QueryMatches } from './list-conditions.js'
export type { JsonRender, OrderJsonRow } from './record-json.js'

function base(db: Db) {
  return db.selectFrom('orders')
}

/** The order row the use cases decide on: its own columns and its offering's type. */
function orderRow(db: Db) {
  return joined(db, 'orders', [ORDER_JOINS.offering])
    .selectAll('orders')
    .select('offerings.type as offering_type')
}

export type OrderRow = Awaited<ReturnType<ReturnType<typeof orderRow>['executeTakeFirstOrThrow']>>

const rowByUuid = reusable((db: Db) => orderRow(db).where('orders.uuid', '=', slot(0)))
const rowById = reusable((db: Db) => orderRow(db).where('orders.id', '=', slot(0)))

interface Scoped {
  project_id: number
  customer_id: number
  provider_customer_id: number
  offering_id: number
}

/**
 * Does the caller see an order (or a resource) of this project, organization, provider and
 * offering? The rule of the list's visibility filter, on a row already read.
 */
export function isVisible(vis: OrderVisibility, row: Scoped): boolean {
  return (
    vis.all ||
    vis.projectIds.includes(row.project_id) ||
    vis.customerIds.includes(row.customer_id) ||
    vis.customerIds.includes(row.provider_customer_id) ||
    vis.offeringIds.includes(row.offering_id)
  )
}

/** The id and version of an order (see record-cache.ts): its own version and the records' epoch. */
export interface OrderVersion {
  id: number
  version: string
}

const epoch = sql<number>`(select n from record_epochs where name = 'orders')`

const versionOf = (r: { id: number; version: number | string; epoch: number | string }): OrderVersion => ({
  id: r.id,
  version: `${r.version}.${r.epoch}`,
})

const pageVersionsOf = reusableByForm()
const versionByUuid = reusable((db: Db) =>
  db
    .selectFrom('orders')
    .select([
      'id',
      'project_id',
      'customer_id',
      'provider_customer_id',
      'offering_id',
      'version',
      epoch.as('epoch'),
    ])
    .where('uuid', '=', slot(0)),
)
type VersionRow = Awaited<ReturnType<typeof versionByUuid>>['rows'][number]

/** What the kept answers read: the orders, and the records' epoch (what their records show). */
const KEPT_TABLES = ['orders', 'epoch orders']

/** What the kept lists read as well: what a `query` text matches (names and slugs, by their epochs). */
const LIST_TABLES = [...new Set([...KEPT_TABLES, ...MATCH_TABLES])]

/** Answers kept at most per kind (a few hundred bytes each). */
const KEPT_MAX = { versions: 20_000, lists: 2_000 }
/**
 * Answers kept while the database's freshness (src/db/change-feed.ts) tells no change that could
 * alter them, so that reading them again costs no statement: `versions`, the version row of an
 * order by uuid (what a retrieve reads: its visibility columns, version and records' epoch),
 * dropped when the order changes; `lists`, list totals and pages' ids and versions, dropped when
 * any order (or what a list's epochs tell) does. On PostgreSQL changes are told by notification;
 * on a SQLite file any commit drops everything. None for in-memory SQLite or a transaction's handle.
 */
const keptOf = {
  versions: notifiedCaches<unknown>(KEPT_TABLES, KEPT_MAX.versions, (r) => (r as VersionRow).id),
  lists: notifiedCaches<unknown>(LIST_TABLES, KEPT_MAX.lists),
}

/**
 * The list conditions whose answers depend on the orders table alone (and on uuids, which never
 * change), or besides on what the lists' epochs tell (`query` and `resource-name`: the projects'
 * and resources' names, the query's matches found beforehand): a list made only of these is kept
 * (`keptOf.lists(db)`). Those reading offerings' names, slugs, types, categories or roles of
 * other tables are not, as their changes are not told.
 */
const KEPT_LIST_FORMS = new Set([
  '',
  'none',
  'visible',
  'consumer-approvable',
  'consumer-approver',
  'provider-approvable',
  'provider-approver',
  'project',
  'customer',
  'provider',
  'offerings',
  'resource',
  'states',
  'types',
  'created-after',
  'created-before',
  'modified-after',
  'modified-before',
  'slug',
  'auto-approved',
  'query',
  'resource-name',
])

/**
 * A list's statement answer (`what`: which statement, `form` its conditions' forms, `values` its
 * parameters), kept when its conditions allow (see KEPT_LIST_FORMS).
 */
async function listAnswer<T>(
  db: Db,
  what: string,
  form: string,
  values: unknown[],
  read: () => Promise<T>,
): Promise<T> {
  const keeps = form.split('|').every((f) => KEPT_LIST_FORMS.has(f.split(':')[0]!))
  const cache = keeps ? keptOf.lists(db) : undefined
  return cache ? ((await cache.get(`${what}/${form}\n${JSON.stringify(values)}`, read)) as T) : read()
}

const countOf = reusableByForm()
// Each order create asks these (the plans only when none is named): compiled once.
/**
 * The first read of a new order, one statement for what a create asked in four: the project,
 * offering and plan its links name (each area's part: its scoping, its columns), the project's
 * organization, whether the offering's organization groups (if it has any) leave it out, and the
 * offering's cost policy that may refuse new resources.
 */
const orderingReadOf = reusableByForm()
const orderingParts = partSplitter()
function orderingRead(db: Db, parts: ReadPart[]) {
  const offeringId = partColumn('offering', 'offering', 'id')
  let q: any = db.selectFrom(sql`(select 1)`.as('one') as any)
  for (const p of parts) q = q.leftJoin(p.build().as(p.name), (join: any) => join.onTrue())
  return q
    .leftJoin('customers', 'customers.id', partColumn('project', 'project', 'customer_id'))
    .selectAll(parts.map((p) => p.name))
    .select(
      prefixed('customer', [
        'customers.id',
        'customers.uuid',
        'customers.name',
        'customers.blocked',
        'customers.archived',
      ]),
    )
    .select((eb: ExpressionBuilder<any, any>) =>
      eb
        .and([
          eb.exists(
            eb
              .selectFrom('offering_organization_groups as og')
              .select('og.offering_id')
              .whereRef('og.offering_id', '=', offeringId),
          ),
          eb.not(
            eb.exists(
              eb
                .selectFrom('offering_organization_groups as og')
                .innerJoin(
                  'customer_organization_groups as cg',
                  'cg.organization_group_id',
                  'og.organization_group_id',
                )
                .select('og.offering_id')
                .whereRef('og.offering_id', '=', offeringId)
                .whereRef('cg.customer_id', '=', 'customers.id'),
            ),
          ),
        ])
        .as('left_out'),
    )
    .select((eb: ExpressionBuilder<any, any>) =>
      newResourcePolicyColumns(eb, eb.ref(offeringId), eb.ref('customers.id')),
    ) as Compilable<Record<string, unknown>>
}
const availablePlansOf = reusable((db: Db, limit: number) =>
  db
    .selectFrom('plans')
    .selectAll()
    .where('offering_id', '=', slot(0))
    .where('archived', '=', 0)
    .limit(limit),
)

/** The ids and versions of one page, picked on the orders table alone. */
async function pageVersions(
  db: Db,
  vis: OrderVisibility,
  f: OrderFilters,
  order: OrderTerm[],
  limit: number,
  offset: number,
): Promise<OrderVersion[]> {
  const all = conditions(db, vis, f)
  const { form, values } = formOf(all)
  const last = order[order.length - 1]
  const idDirection = last?.desc ? 'desc' : 'asc'
  const by = [...order.map((t) => `${t.column} ${t.desc ? 'desc' : 'asc'}`), `id ${idDirection}`]
  const build = () => {
    let q = applyConditions(base(db), all).select(['orders.id', 'orders.version', epoch.as('epoch')])
    for (const t of order) q = q.orderBy(t.column as any, t.desc ? 'desc' : 'asc')
    return q
      .orderBy('orders.id', idDirection)
      .limit(slot<number>(values.length))
      .offset(slot<number>(values.length + 1))
  }
  const key = `${form}/${by.join(',')}`
  const params = [...values, limit, offset]
  return listAnswer(db, `page/${by.join(',')}`, form, params, async () =>
    (await pageVersionsOf(db, key, build, params)).rows.map(versionOf),
  )
}

/** The rows in the order of `ids` (a row gone since the ids were picked is left out). */
function inOrder<R extends { id: number }>(ids: number[], rows: R[]): R[] {
  const byId = new Map(rows.map((r) => [r.id, r]))
  return ids.map((id) => byId.get(id)).filter((r): r is R => !!r)
}

const ordersTotal = reusable((db: Db) => db.selectFrom('row_counts').select('n').where('name', '=', 'orders'))

// The statements of a state transition, compiled once: a transition holds SQLite's one writer,
// and building each statement anew was a large part of the time it held it.
/** `update orders set <columns> where id = ? and state in (<from> states)`, every value a slot. */
function stateUpdate(q: Pick<Db, 'updateTable'>, names: string[], from: number) {
  return q
    .updateTable('orders')
    .set(Object.fromEntries(names.map((c, i) => [c, slot(i)])) as any)
    .where('id', '=', slot(names.length))
    .where(
      'state',
      'in',
      Array.from({ length: from }, (_, i) => slot(names.length + 1 + i)),
    )
}
const updateStateIf = reusable((db: Db, columns: string, from: number) =>
  stateUpdate(db, columns.split(','), from),
)
/** The columns of an outbox row, in the order their slots follow a write's own. */
const EVENT_COLUMNS = OUTBOX_COLUMNS

/** The outbox row's insert, its slots numbered from `from`: the CTE a write carries its event in. */
function eventInsert(db: Db, from: number) {
  return db
    .insertInto('outbox_events')
    .values(Object.fromEntries(EVENT_COLUMNS.map((c, i) => [c, slot(from + i)])) as any)
}

const eventValues = (e: OutboxRow) => EVENT_COLUMNS.map((c) => e[c])

// PostgreSQL: an order's insert or transition and the outbox row telling it, one statement (a
// data-modifying CTE), so the event costs no round trip of its own. SQLite runs the two in turn.
const insertWithEvent = reusableByForm(Infinity)
// The transition is the CTE and the event's insert reads what it moved: an order that did not
// move (another request moved it first) writes no event, so the statement is a whole transition
// on its own. (PostgreSQL types the event's parameters by the columns they are inserted into.)
const updateStateIfWithEvent = reusable((db: Db, columns: string, from: number) => {
  const names = columns.split(',')
  const first = names.length + 1 + from
  const moving = db.with('moved', (q) => stateUpdate(q, names, from).returning('id'))
  return moving
    .insertInto('outbox_events')
    .columns([...EVENT_COLUMNS])
    .expression(
      db
        .selectNoFrom((eb) => EVENT_COLUMNS.map((c, i) => eb.val(slot(first + i)).as(c)))
        .where(sql<boolean>`exists (select from moved)`),
    )
})

const TRANSITION_JOINS = [ORDER_JOINS.project, ORDER_JOINS.customer, ORDER_JOINS.resource] as const
const TRANSITION_FACTS = [
  'resources.uuid as resource_uuid',
  'projects.start_date as project_start_date',
  'projects.name as project_name',
  'projects.end_date as project_end_date',
  'customers.blocked as customer_blocked',
  'customers.archived as customer_archived',
  'offerings.uuid as offering_uuid',
  'offerings.plugin_options as offering_plugin_options',
  'projects.uuid as project_uuid',
  'customers.uuid as customer_uuid',
] as const

/**
 * The order row with what its state changes read besides: its resource's uuid, its project's
 * start, what a consumer approval checks of its organization and project, and the uuids its
 * events tell.
 */
function transitionRow(db: Db) {
  return withJoins(orderRow(db), TRANSITION_JOINS).select(TRANSITION_FACTS)
}
export type TransitionRow = Awaited<ReturnType<ReturnType<typeof transitionRow>['executeTakeFirstOrThrow']>>

const transitionRowById = reusable((db: Db) => transitionRow(db).where('orders.id', '=', slot(0)))
const transitionRowByUuid = reusable((db: Db) => transitionRow(db).where('orders.uuid', '=', slot(0)))

/**
 * A transition that one statement reads, decides and writes (PostgreSQL): what it moves the
 * order to and on which conditions, as SQL on the transition row `o` (see `moveDecided`).
 */
export interface DecidedTransition {
  uuid: string
  /** The one state the order moves from. */
  from: OrderState
  /** The target in each approval context, as `contextTargets` gives them (see `CONTEXT_BITS`). */
  targets: readonly OrderState[]
  /** Columns written with the state (as `updateStateIfCurrent`'s, the state left out). */
  values: Record<string, unknown>
  /**
   * The SQL of the context's facts, the conditions the move needs past its state (permission,
   * prechecks) and that of a move with no side effects, each on the row `o` (and the target);
   * `param` gives a value its placeholder.
   */
  sql: (param: (value: unknown) => string) => {
    context: Record<'projectNotStarted' | 'providerMustReview' | 'startDateInFuture', string>
    conditions: string[]
    quiet: (target: string) => string
  }
  /** The event telling the move; a value `DECIDED_FACT(column)` stands for that column of `o`. */
  event: OutboxRow
}

/** In a decided transition's event, a value that the statement takes from the row `o` (or the target). */
export const DECIDED_FACT = (column: keyof TransitionRow | 'target') => `@@${column}@@`
/** A key of the envelope's data holding a placeholder, and the placeholder's name. */
const DATA_FACT = /"(\w+)":"@@(\w+)@@"/g

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`
/** The column of `o` a placeholder's name stands for (the target: the state moved to). */
const factColumn = (name: string) => (name === 'target' ? '"moved"."state"' : `"o".${quoted(name)}`)
/** A placeholder's column, or null for any other value. */
function factSql(value: string): string | null {
  const m = /^@@(\w+)@@$/.exec(value)
  return m ? factColumn(m[1]!) : null
}

/**
 * What a decided transition reads of the order by uuid (`$1`): the transition row's facts and the
 * order's columns they are decided on, not the whole row (compiled once per database).
 */
const transitionRowAsCte = perDatabase((db: Db) =>
  withJoins(joined(db, 'orders', [ORDER_JOINS.offering]), TRANSITION_JOINS)
    .select([
      'orders.id',
      'orders.state',
      'orders.type',
      'orders.customer_id',
      'orders.project_id',
      'orders.provider_customer_id',
      'orders.offering_id',
      'orders.resource_id',
      'orders.start_date',
      'orders.callback_url',
      'offerings.type as offering_type',
      ...TRANSITION_FACTS,
    ])
    .where('orders.uuid', '=', slot(0))
    .compile(),
)

/**
 * `with o` (what the transition is decided on), `d` (the target, when the conditions hold),
 * `moved` (the conditional update, when the move has no side effects), `told` (the event, when it
 * moved): the state it moved to (`moved_to`, null when it did not move).
 */
function decidedStatement(db: Db, t: DecidedTransition): { text: string; params: unknown[] } {
  const cte = transitionRowAsCte(db)
  const params: unknown[] = cte.parameters.map((p) => (p === slot(0) ? t.uuid : p))
  const param = (value: unknown) => {
    params.push(value)
    return `$${params.length}`
  }
  const { context, conditions, quiet } = t.sql(param)
  const bit = (fact: keyof typeof CONTEXT_BITS) =>
    `(case when ${context[fact]} then ${CONTEXT_BITS[fact]} else 0 end)`
  const target = `(${param(t.targets)}::text[])[1 + ${bit('projectNotStarted')} + ${bit('providerMustReview')} + ${bit('startDateInFuture')}]`
  const from = param(t.from)
  const columns = Object.keys(t.values).filter((c) => t.values[c] !== undefined)
  const sets = columns.map((c) => `${quoted(c)} = ${param(t.values[c])}`)
  // The event: the facts of the row in place of their placeholders, in its columns and in its
  // envelope's data, whose keys holding one are laid over with the row's values.
  const envelope = t.event.envelope as string
  const overlay = [...envelope.matchAll(DATA_FACT)].map(
    ([, key, fact]) => `${param(key)}::text, ${factColumn(String(fact))}`,
  )
  const told = EVENT_COLUMNS.map((c) => {
    const value = t.event[c]
    if (c !== 'envelope') return (typeof value === 'string' && factSql(value)) || param(value)
    const base = `${param(value)}::jsonb`
    return `${base} || jsonb_build_object('data', (${base} -> 'data') || jsonb_build_object(${overlay.join(', ')}))`
  })
  const text = [
    `with "o" as (${cte.sql}),`,
    `"d" as (select "o"."id", ${target} as "target" from "o"`,
    ` where "o"."state" = ${from}${conditions.map((c) => ` and (${c})`).join('')}),`,
    `"moved" as (update "orders" set "state" = "d"."target"${sets.map((x) => `, ${x}`).join('')}`,
    ` from "d" cross join "o"`,
    ` where "orders"."id" = "d"."id" and "orders"."state" = ${from} and "d"."target" is not null and ${quiet('"d"."target"')}`,
    ` returning "orders"."state"),`,
    `"told" as (insert into "outbox_events" (${EVENT_COLUMNS.map(quoted).join(', ')})`,
    ` select ${told.join(', ')} from "moved" cross join "o")`,
    `select (select "state" from "moved") as "moved_to"`,
  ].join('\n')
  return { text, params }
}

/** The orders' statements for `db`, made once per database handle (`perDatabase`). */
export const ordersRepository = perDatabase((db: Db) => {
  const dialect = isPostgres(db as never) ? 'pg' : 'sqlite'
  return {
    async count(vis: OrderVisibility, f: OrderFilters): Promise<number> {
      // Everything, unfiltered: the trigger-kept total instead of a scan of the table.
      // (A filter's value may be false, `was_auto_approved=false`: only an absent one is no filter.)
      if (vis.all && Object.values(f).every((v) => v === undefined || (Array.isArray(v) && v.length === 0))) {
        const total = await listAnswer(
          db,
          'total',
          '',
          [],
          async () => (await ordersTotal(db, [], [])).rows[0],
        )
        if (total) return Number(total.n)
      }
      const all = conditions(db, vis, f)
      const { form, values } = formOf(all)
      if (all.every((c) => c.counted)) {
        // Only projects and states: a sum over the trigger-kept counts, not a count of orders.
        const counts = db.selectFrom('order_counts as orders') as unknown as OrdersQuery
        const build = () =>
          applyConditions(counts, all).select(sql<number>`coalesce(sum(orders.n), 0)`.as('n'))
        return listAnswer(db, 'counts', form, values, async () =>
          Number((await countOf(db, `counts/${form}`, build, values)).rows[0]!.n),
        )
      }
      const build = () => applyConditions(base(db), all).select((eb) => eb.fn.countAll<number>().as('n'))
      return listAnswer(db, 'count', form, values, async () =>
        Number((await countOf(db, form, build, values)).rows[0]!.n),
      )
    },
    /** What a `query` text matches (see `matchQuery`). */
    matchQuery(text: string, uuid: string | null): Promise<QueryMatches> {
      return matchQuery(db, text, uuid)
    },
    /** One page's ids and versions, picked on the orders table alone. */
    page(vis: OrderVisibility, f: OrderFilters, order: OrderTerm[], limit: number, offset: number) {
      return pageVersions(db, vis, f, order, limit, offset)
    },
    /** The records of these orders, rendered, in the order of `ids` (those gone are left out). */
    async render(ids: number[], render: JsonRender): Promise<OrderJsonRow[]> {
      if (!ids.length) return []
      const { rows } = await jsonByIds(db, [ids.length], [...renderParams(render), ...ids])
      return inOrder(ids, rows)
    },
    /** The order's id and version, when the caller may see it (the list's visibility rule). */
    async findVisibleVersionByUuid(vis: OrderVisibility, uuid: string): Promise<OrderVersion | undefined> {
      const read = async () => (await versionByUuid(db, [], [uuid])).rows[0]
      const kept = keptOf.versions(db)
      const row = kept ? ((await kept.get(uuid, read)) as VersionRow | undefined) : await read()
      return row && isVisible(vis, row) ? versionOf(row) : undefined
    },
    async findJsonById(id: number, render: JsonRender): Promise<OrderJsonRow | undefined> {
      return (await jsonById(db, [], [...renderParams(render), id])).rows[0]
    },
    /** The order, when the caller may see it (the same rule as the list's visibility filter). */
    async findVisibleByUuid(vis: OrderVisibility, uuid: string): Promise<OrderRow | undefined> {
      const row = (await rowByUuid(db, [], [uuid])).rows[0]
      return row && isVisible(vis, row) ? row : undefined
    },
    async findById(id: number): Promise<OrderRow | undefined> {
      return (await rowById(db, [], [id])).rows[0]
    },
    insert(values: Record<string, unknown>): Promise<number> {
      return insertReturningId(db, 'orders', values)
    },
    /**
     * Inserts the order and the outbox row telling it (see `insertWithEvent`): the order's id, and
     * on PostgreSQL its record, rendered in the same statement (`render`), so that answering it
     * costs no read of its own.
     */
    async insertTold(
      values: Record<string, unknown>,
      event: OutboxRow,
      render: JsonRender,
    ): Promise<{ id: number; record?: OrderJsonRow }> {
      if (!isPostgres(db as never)) {
        const id = await insertReturningId(db, 'orders', values)
        await insertReturningId(db, 'outbox_events', event)
        return { id }
      }
      const columns = Object.keys(values).filter((c) => values[c] !== undefined)
      const at = columns.length + EVENT_COLUMNS.length
      const build = () => {
        const insert = db
          .with('told', () => eventInsert(db, columns.length))
          .with('orders', () =>
            db
              .insertInto('orders')
              .values(Object.fromEntries(columns.map((c, i) => [c, slot(i)])) as any)
              .returningAll(),
          )
        return insertedJson(db, insert as unknown as Db, at)
      }
      const { rows } = await insertWithEvent(db, `told:${columns.join(',')}`, build, [
        ...columns.map((c) => values[c]),
        ...eventValues(event),
        ...renderParams(render),
      ])
      const record = rows[0] as OrderJsonRow
      return { id: record.id, record }
    },
    /**
     * PostgreSQL: a new Create order's resource and the order, with its event and its record, in
     * one statement (as `insertTold`), which commits or fails as a whole outside a transaction.
     * The resource takes the next slug of `slugBase` (`nextSlugQuery`), the order the resource's id,
     * and the record reads the resource as inserted (the `resources` CTE stands for the table).
     * Undefined when the slug was taken (by one a staff member set): the caller tries again, and
     * the counter gives the next number.
     */
    async insertToldWithResource(
      resource: Record<string, unknown>,
      slugBase: string,
      values: Record<string, unknown>,
      event: OutboxRow,
      render: JsonRender,
    ): Promise<{ id: number; resourceId: number; record: OrderJsonRow } | undefined> {
      const rColumns = Object.keys(resource).filter((c) => resource[c] !== undefined)
      const oColumns = Object.keys(values).filter((c) => values[c] !== undefined && c !== 'resource_id')
      // Slots: the slug's base, the resource's columns, the order's, the event's, then the
      // record's two.
      const r0 = 1
      const o0 = r0 + rColumns.length
      const e0 = o0 + oColumns.length
      const at = e0 + EVENT_COLUMNS.length
      const d = db as any
      // `insert into <table> (<columns>, <extra>) select <slots from first>, <extra's columns of
      // source> from <source>`: a row for each row of the CTE `source` (none when it wrote none).
      const insertFrom = (
        table: string,
        columns: string[],
        source: string,
        first: number,
        extra: [string, string][],
      ) =>
        d
          .insertInto(table)
          .columns([...columns, ...extra.map(([c]) => c)])
          .expression(
            d
              .selectFrom(source)
              .select((eb: any) => [
                ...columns.map((c, i) => eb.val(slot(first + i)).as(c)),
                ...extra.map(([c, ref]) => `${ref} as ${c}`),
              ]),
          )
      const build = () => {
        const insert = d
          .with('slug', () => nextSlugQuery(db, 'resources', slot(0)))
          .with('resources', () =>
            insertFrom('resources', rColumns, 'slug', r0, [['slug', 'slug.slug']])
              .onConflict((oc: any) => oc.column('slug').doNothing())
              .returningAll(),
          )
          .with('told', () => insertFrom('outbox_events', [...EVENT_COLUMNS], 'resources', e0, []))
          .with('orders', () =>
            insertFrom('orders', oColumns, 'resources', o0, [['resource_id', 'resources.id']]).returningAll(),
          )
        return insertedJson(db, insert as Db, at).select('orders.resource_id')
      }
      const { rows } = await insertWithEvent(
        db,
        `told+resource:${rColumns.join(',')}:${oColumns.join(',')}`,
        build,
        [
          slugBase,
          ...rColumns.map((c) => resource[c]),
          ...oColumns.map((c) => values[c]),
          ...eventValues(event),
          ...renderParams(render),
        ],
      )
      const row = rows[0] as (OrderJsonRow & { resource_id: number }) | undefined
      return row && { id: row.id, resourceId: row.resource_id, record: row }
    },
    /**
     * The transition write: only when the order is still in one of `from`, with the outbox row
     * telling it when `event` is given (written only when it moved). True when it moved.
     */
    async updateStateIfCurrent(
      id: number,
      from: readonly OrderState[],
      values: Record<string, unknown>,
      event?: OutboxRow,
    ): Promise<boolean> {
      // As Kysely's `set`, an undefined value leaves its column alone.
      const columns = Object.keys(values).filter((c) => values[c] !== undefined)
      const variant: [string, number] = [columns.join(','), from.length]
      const params = [...columns.map((c) => values[c]), id, ...from]
      if (event && isPostgres(db as never)) {
        // One statement: the event is inserted only when the order moved.
        const r = await updateStateIfWithEvent(db, variant, [...params, ...eventValues(event)])
        return Number(r.numAffectedRows) === 1
      }
      const r = await updateStateIf(db, variant, params)
      const moved = Number(r.numAffectedRows) === 1
      if (moved && event) await insertReturningId(db, 'outbox_events', event)
      return moved
    },
    /**
     * PostgreSQL: the order read, its transition decided and, when the decision has no side
     * effect past the order's row and its event, written, in one statement (`decidedStatement`);
     * no transaction, as `updateStateIfCurrent`'s. Whether it moved.
     */
    async moveDecided(t: DecidedTransition): Promise<boolean> {
      const { text, params } = decidedStatement(db, t)
      const { rows } = await db.executeQuery<{ moved_to: string | null }>(CompiledQuery.raw(text, params))
      return rows[0]?.moved_to != null
    },
    /**
     * Whether `updateStateIfCurrent` with its event is one statement (PostgreSQL), which commits
     * or fails as a whole outside a transaction; SQLite sends the event's insert apart.
     */
    stateUpdateIsOneStatement: isPostgres(db as never),
    /** Whether `insertToldWithResource` is available (PostgreSQL: one statement). */
    createIsOneStatement: isPostgres(db as never),
    /** What the side effects of a transition need to know of the order. */
    async transitionRow(id: number) {
      const row = (await transitionRowById(db, [], [id])).rows[0]
      if (!row) throw new Error(`order ${id} is gone`)
      return row
    },
    /**
     * The order row with its resource's uuid, when the caller may see it: a transition decides on
     * it and its side effects read it (the columns they read are not among those it writes).
     */
    async findVisibleTransitionRowByUuid(vis: OrderVisibility, uuid: string) {
      const row = (await transitionRowByUuid(db, [], [uuid])).rows[0]
      return row && isVisible(vis, row) ? row : undefined
    },
    /** What the order's events tell of it: its state and the uuids of it and its scopes. */
    eventRow(id: number) {
      return db
        .selectFrom('orders')
        .innerJoin('offerings', 'offerings.id', 'orders.offering_id')
        .innerJoin('projects', 'projects.id', 'orders.project_id')
        .innerJoin('customers', 'customers.id', 'orders.customer_id')
        .leftJoin('resources', 'resources.id', 'orders.resource_id')
        .select([
          'orders.uuid',
          'orders.type',
          'orders.state',
          'offerings.uuid as offering_uuid',
          'projects.uuid as project_uuid',
          'customers.uuid as customer_uuid',
          'resources.uuid as resource_uuid',
        ])
        .where('orders.id', '=', id)
        .executeTakeFirst()
    },
    update: (id: number, values: Record<string, unknown>) => updateRow(db, 'orders', id, values),
    delete: (id: number) => deleteRow(db, 'orders', id),
    /**
     * A new order's first read (see `orderingRead`): the rows its project, offering and plan
     * parts name (undefined: none, or not visible), the project's organization, and what its
     * checks need.
     */
    async orderingRead<P, O, L>(project: ReadPartOf<P>, offering: ReadPartOf<O>, plan: ReadPartOf<L>) {
      const parts: ReadPart[] = []
      let from = 0
      for (const of of [project, offering, plan]) {
        const part = of(from)
        parts.push(part)
        from += part.values.length
      }
      const form = parts.map((p) => `${p.form}.${p.values.length}`).join('|')
      const values = parts.flatMap((p) => p.values)
      const row = (await orderingReadOf(db, form, () => orderingRead(db, parts), values)).rows[0]
      const rows = orderingParts(`${dialect}:${form}`, row)
      const customer = rows.customer as
        { id: number; uuid: string; name: string; blocked: number; archived: number } | undefined
      return {
        project: rows.project as P | undefined,
        offering: rows.offering as O | undefined,
        plan: rows.plan as L | undefined,
        customer: customer && {
          ...customer,
          left_out: !!Number(row!.left_out),
          policy_any: row!.policy_any,
          policy_uuid: (row!.policy_uuid ?? null) as string | null,
          policy_limit_cost: row!.policy_limit_cost,
        },
      }
    },
    /** The offering's plans not archived, at most `limit` of them. */
    async availablePlans(offeringId: number, limit: number) {
      return (await availablePlansOf(db, [limit], [offeringId])).rows
    },
    planById: (id: number) => firstWhere(db.selectFrom('plans').selectAll(), 'id', id),
    offeringById: (id: number) => firstWhere(db.selectFrom('offerings').selectAll(), 'id', id),
    customerById: (id: number) => firstWhere(db.selectFrom('customers').selectAll(), 'id', id),
    /** Deletes the order when it is still in one of `from`. True when it was deleted. */
    async deleteIfState(id: number, from: readonly OrderState[]): Promise<boolean> {
      const r = await db
        .deleteFrom('orders')
        .where('id', '=', id)
        .where('state', 'in', [...from])
        .executeTakeFirst()
      return Number(r.numDeletedRows) === 1
    },
    /** What a delayed move (start date, project start) reads of the order. */
    dueRow(id: number) {
      return joined(db, 'orders', [ORDER_JOINS.offering, ORDER_JOINS.project])
        .select([
          'orders.id',
          'orders.state',
          'orders.start_date',
          'offerings.type as offering_type',
          'projects.start_date as project_start_date',
        ])
        .where('orders.id', '=', id)
        .executeTakeFirst()
    },
    /** Is there a pending or executing order for this resource? */
    async hasOpenOrderForResource(resourceId: number): Promise<boolean> {
      const r = await db
        .selectFrom('orders')
        .select('id')
        .where('resource_id', '=', resourceId)
        .where('state', 'in', [
          'pending-consumer',
          'pending-provider',
          'pending-project',
          'pending-start-date',
          'executing',
        ])
        .executeTakeFirst()
      return !!r
    },
  }
})

export function resourcesWriteRepository(db: Db) {
  return {
    update: (id: number, values: Record<string, unknown>) => updateRow(db, 'resources', id, values),
    findById: (id: number) => firstWhere(db.selectFrom('resources').selectAll(), 'id', id),
    /** The resource an Update or Terminate order is placed for, with what the order reads of its offering. */
    findForOrder(uuid: string) {
      return joined(db, 'resources', [OFFERING_OF_RESOURCE])
        .select([
          'resources.id',
          'resources.state',
          'resources.plan_id',
          'resources.limits',
          'resources.project_id',
          'resources.customer_id',
          'resources.offering_id',
          'resources.attributes',
          'resources.name',
          'offerings.name as offering_name',
          'offerings.customer_id as provider_customer_id',
          'offerings.type as offering_type',
          'offerings.state as offering_state',
          'offerings.shared as offering_shared',
          'offerings.plugin_options as offering_plugin_options',
        ])
        .where('resources.uuid', '=', uuid)
        .executeTakeFirst()
    },
    /** The resource's offering and plan, by its uuid. */
    findPlanByUuid(uuid: string) {
      return db
        .selectFrom('resources')
        .select(['offering_id', 'plan_id'])
        .where('uuid', '=', uuid)
        .executeTakeFirst()
    },
  }
}
