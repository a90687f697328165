// The event outbox's SQL: writing an event, giving positions (the sequencer), reading in position
// order, the retention's deletions.
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { insertReturningId } from '../../db/compiled.js'

type Db = Kysely<DB> | Transaction<DB>

/** The counter rows of `outbox_positions`: the last position given, and the last one deleted. */
const GIVEN = 'events'
const PURGED = 'purged'

export interface EventRow {
  position: number
  uuid: string
  type: string
  object_type: string
  object_uuid: string
  offering_uuid: string | null
  project_uuid: string | null
  customer_uuid: string | null
  envelope: unknown
  created: string
}

export interface EventFilters {
  type?: string[]
  object_type?: string[]
  offering_uuid?: string
  project_uuid?: string
  customer_uuid?: string
  after?: number
}

/** The columns an event is written with (its position comes after the commit on PostgreSQL). */
export const OUTBOX_COLUMNS = [
  'uuid',
  'type',
  'object_type',
  'object_uuid',
  'offering_uuid',
  'project_uuid',
  'customer_uuid',
  'envelope',
  'created',
] as const

const COLUMNS = ['position', ...OUTBOX_COLUMNS] as const

export function eventsRepository(db: Db) {
  return {
    /**
     * Writes one event in the caller's transaction, without a position: on SQLite a trigger gives
     * it one at once (writes are serial there), on PostgreSQL the sequencer after the commit.
     */
    async insert(values: Omit<EventRow, 'position'>): Promise<void> {
      await insertReturningId(db, 'outbox_events', values)
    },

    /** Are there committed events without a position (PostgreSQL)? */
    async anyUnsequenced(): Promise<boolean> {
      const r = await db
        .selectFrom('outbox_events')
        .select('id')
        .where('position', 'is', null)
        .limit(1)
        .execute()
      return r.length > 0
    },

    /**
     * PostgreSQL: gives the committed events without a position past the id `after` the next
     * positions, in the order they were written, up to `batch` of them; the number given and the
     * last id numbered. Run inside a transaction: the counter row stays locked until it commits,
     * so sequencers run one at a time and each one's positions become visible before the next
     * one's are given.
     */
    async sequenceBatch(batch: number, after: number): Promise<{ n: number; lastId: number }> {
      const counter = await sql<{ last: number }>`select last from outbox_positions
        where name = ${GIVEN} for update`.execute(db)
      const last = Number(counter.rows[0]!.last)
      const r = await sql<{ n: number; last_id: number | null }>`with numbered as (
          update outbox_events set position = ${last} + b.n
          from (select id, row_number() over (order by id) as n from outbox_events
                where position is null and id > ${after} order by id limit ${batch}) b
          where outbox_events.id = b.id
          returning outbox_events.id)
        select count(*) as n, max(id) as last_id from numbered`.execute(db)
      const n = Number(r.rows[0]!.n)
      if (n) await sql`update outbox_positions set last = last + ${n} where name = ${GIVEN}`.execute(db)
      return { n, lastId: Number(r.rows[0]!.last_id ?? after) }
    },

    /** The last position given (0 before any); on PostgreSQL, the last one committed. */
    async head(): Promise<number> {
      const r = await db
        .selectFrom('outbox_positions')
        .select('last')
        .where('name', '=', GIVEN)
        .executeTakeFirst()
      return Number(r?.last ?? 0)
    },

    /** The highest position deleted by the retention (0 when none was). */
    async purgedUpTo(): Promise<number> {
      const r = await db
        .selectFrom('outbox_positions')
        .select('last')
        .where('name', '=', PURGED)
        .executeTakeFirst()
      return Number(r?.last ?? 0)
    },

    /** Events past `after`, in position order, at most `limit`. */
    after(after: number, limit: number): Promise<EventRow[]> {
      return db
        .selectFrom('outbox_events')
        .select(COLUMNS)
        .where('position', '>', after)
        .orderBy('position')
        .limit(limit)
        .execute() as Promise<EventRow[]>
    },

    /** The positions and objects of the events these filters keep, in position order. */
    positions(f: EventFilters) {
      return filtered(db, f)
        .select([
          'position',
          'object_type',
          'object_uuid',
          'offering_uuid',
          'project_uuid',
          'customer_uuid',
          'envelope',
        ])
        .orderBy('position')
        .execute() as Promise<Omit<EventRow, 'uuid' | 'type' | 'created'>[]>
    },

    count(f: EventFilters): Promise<number> {
      return filtered(db, f)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
        .then((r) => Number(r.n))
    },

    page(f: EventFilters, limit: number, offset: number): Promise<EventRow[]> {
      return filtered(db, f)
        .select(COLUMNS)
        .orderBy('position')
        .limit(limit)
        .offset(offset)
        .execute() as Promise<EventRow[]>
    },

    byPositions(positions: number[]): Promise<EventRow[]> {
      if (!positions.length) return Promise.resolve([])
      return db
        .selectFrom('outbox_events')
        .select(COLUMNS)
        .where('position', 'in', positions)
        .orderBy('position')
        .execute() as Promise<EventRow[]>
    },

    /** Is the cleanup job queued or running? */

    /**
     * Deletes up to `batch` events written before `before` (never one still without a position),
     * raising the purged mark to the highest position deleted; the number deleted.
     */
    async purgeBatch(before: string, batch: number): Promise<number> {
      const doomed = await db
        .selectFrom('outbox_events')
        .select('position')
        .where('created', '<', before)
        .where('position', 'is not', null)
        .orderBy('position')
        .limit(batch)
        .execute()
      if (!doomed.length) return 0
      const positions = doomed.map((r) => Number(r.position))
      const highest = positions[positions.length - 1]!
      await db.deleteFrom('outbox_events').where('position', 'in', positions).execute()
      await db
        .updateTable('outbox_positions')
        .set((eb) => ({
          last: sql<number>`case when ${eb.ref('last')} < ${highest} then ${highest} else ${eb.ref('last')} end`,
        }))
        .where('name', '=', PURGED)
        .execute()
      return positions.length
    },
  }
}

function filtered(db: Db, f: EventFilters) {
  let q = db.selectFrom('outbox_events').where('position', 'is not', null)
  if (f.after !== undefined) q = q.where('position', '>', f.after)
  if (f.type?.length) q = q.where('type', 'in', f.type)
  if (f.object_type?.length) q = q.where('object_type', 'in', f.object_type)
  if (f.offering_uuid) q = q.where('offering_uuid', '=', f.offering_uuid)
  if (f.project_uuid) q = q.where('project_uuid', '=', f.project_uuid)
  if (f.customer_uuid) q = q.where('customer_uuid', '=', f.customer_uuid)
  return q
}
