// SQL of projects.
import { sql } from 'kysely'
import { insertReturningId, reusableByForm, slot, slottedLists, perDatabase } from '../../db/compiled.js'
import { scopedList } from '../../db/listing.js'
import { deleteRow, updateRow } from '../../db/rows.js'
import { icontainsAny, inAnyOf, isPostgres } from '../../db/sql.js'
import { deleteGrantsOn } from './customer-repository.js'
import { unlessAll } from '../../db/joins.js'
import type { Db, Visibility } from './repository.js'
import { partByUuid, type ReadPart } from '../../db/read-parts.js'

const projectByUuid = reusableByForm()

/** The `query` filter of projects: name or description. */
export const searchProjects = icontainsAny(['projects.name', 'projects.description'])

const columns = [
  'projects.id',
  'projects.uuid',
  'projects.name',
  'projects.customer_id',
  'projects.description',
  'projects.slug',
  'projects.start_date',
  'projects.end_date',
  'projects.created',
  'projects.modified',
  'customers.uuid as customer_uuid',
  'customers.name as customer_name',
  'customers.abbreviation as customer_abbreviation',
  'customers.native_name as customer_native_name',
] as const

/** The project columns a read made of several answers (a new order's checks). */
export const PROJECT_LINK_COLUMNS = [
  'projects.id',
  'projects.uuid',
  'projects.name',
  'projects.customer_id',
  'projects.start_date',
  'projects.end_date',
] as const

/** A visibility with its ids as slots numbered from `from`, for a compiled query (`slottedLists`). */
function slottedVisibility(
  vis: Visibility,
  from: number,
): { slotted: Visibility; values: number[]; form: string } {
  if (vis.all) return { slotted: vis, values: [], form: 'all' }
  const lists = slottedLists([vis.customerIds, vis.projectIds], from)
  const [customerIds, projectIds] = lists.slots as [number[], number[]]
  return {
    slotted: { all: false, userId: vis.userId, customerIds, projectIds },
    values: lists.values,
    form: lists.form,
  }
}

/** The SQL of the table, built once per database handle (`perDatabase`). */
export const projectsRepository = perDatabase((db: Db) => {
  /** Projects of the caller's customers, and the projects the caller has a role in. */
  const visible = unlessAll(
    () => db.selectFrom('projects').innerJoin('customers', 'customers.id', 'projects.customer_id'),
    (q, vis: Extract<Visibility, { all: false }>) =>
      q.where((eb) =>
        inAnyOf(eb, [
          ['projects.customer_id', vis.customerIds],
          ['projects.id', vis.projectIds],
        ]),
      ),
  )
  const all = visible({ all: true })
  return {
    ...scopedList(visible, (q) => q.select(columns), 'projects.id'),
    /** Compiled once per form of the caller's scopes: order creation resolves a project each time. */
    async findVisibleByUuid(vis: Visibility, uuid: string) {
      const { slotted, values, form } = slottedVisibility(vis, 0)
      const build = () => visible(slotted).select(columns).where('projects.uuid', '=', slot(values.length))
      return (await projectByUuid(db, form, build, [...values, uuid])).rows[0]
    },
    /**
     * `findVisibleByUuid` as part `project` of a read made of several (see `ReadPart`), with the
     * columns a new order reads (`PROJECT_LINK_COLUMNS`).
     */
    visiblePart(vis: Visibility, uuid: string | null, from: number): ReadPart {
      const { slotted, ...scope } = slottedVisibility(vis, from)
      return partByUuid('project', 'projects', PROJECT_LINK_COLUMNS, scope, uuid, from, () =>
        visible(slotted),
      )
    },
    findByUuid(uuid: string) {
      return all.select(columns).where('projects.uuid', '=', uuid).executeTakeFirst()
    },
    findById(id: number) {
      return all.select(columns).where('projects.id', '=', id).executeTakeFirst()
    },
    /** The uuids of every project of a customer, oldest first. */
    uuidsOfCustomer(customerId: number) {
      return db
        .selectFrom('projects')
        .select(['uuid'])
        .where('customer_id', '=', customerId)
        .orderBy('id')
        .execute()
    },
    /**
     * Holds the customer's project names until the transaction ends (PostgreSQL; SQLite runs one
     * write transaction at a time), so two transactions picking a free name never pick the same.
     */
    async lockNames(customerId: number): Promise<void> {
      if (isPostgres(db))
        await sql`select pg_advisory_xact_lock(hashtext(${`project-names:${customerId}`}))`.execute(db)
    },
    /** Names of the customer's projects that begin with `prefix` (exact, case-sensitive). */
    async namesStartingWith(prefix: string, customerId: number): Promise<string[]> {
      const rows = await db
        .selectFrom('projects')
        .select('name')
        .where('customer_id', '=', customerId)
        .where(sql<boolean>`substr(name, 1, ${prefix.length}) = ${prefix}`)
        .execute()
      return rows.map((r) => r.name)
    },
    insert: (values: Record<string, unknown>) => insertReturningId(db, 'projects', values),
    update: (id: number, values: Record<string, unknown>) => updateRow(db, 'projects', id, values),
    async delete(id: number): Promise<void> {
      await deleteGrantsOn(db, 'project', id)
      await deleteRow(db, 'projects', id)
    },
  }
})
