// All SQL of payment profiles.
import { sql, type Kysely, type Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import type { Dialect } from '../../db/database.js'
import { tableRecords, updateRow } from '../../db/rows.js'
import { joined, unlessAll } from '../../db/joins.js'
import { inAnyOf } from '../../db/sql.js'

type Db = Kysely<DB> | Transaction<DB>

/** Staff and support see every profile; organization owners only the active ones of their organizations. */
export type ProfileVisibility = { all: true } | { all: false; customerIds: number[] }

export function paymentProfilesRepository(db: Db) {
  const base = () =>
    joined(db, 'payment_profiles', [['inner', 'customers', 'payment_profiles.organization_id']])
  const visible = unlessAll(base, (q, vis: { customerIds: number[] }) =>
    q
      .where((eb) => inAnyOf(eb, [['payment_profiles.organization_id', vis.customerIds]]))
      .where('payment_profiles.is_active', '=', 1),
  )
  const columns = [
    'payment_profiles.id',
    'payment_profiles.uuid',
    'payment_profiles.name',
    'payment_profiles.organization_id',
    'payment_profiles.attributes',
    'payment_profiles.payment_type',
    'payment_profiles.is_active',
    'customers.uuid as organization_uuid',
  ] as const
  return {
    ...tableRecords(db, { table: 'payment_profiles', base, visible, select: (q) => q.select(columns) }),
    /**
     * Serializes activations within one organization: on PostgreSQL the organization row is
     * locked until the transaction ends (SQLite runs one write transaction at a time anyway).
     */
    async lockOrganization(dialect: Dialect, organizationId: number): Promise<void> {
      if (dialect === 'postgres') {
        await sql`select id from customers where id = ${organizationId} for update`.execute(db)
      }
    },
    /** Makes `id` the only active profile of its organization (others first: the unique index). */
    async activateOnly(organizationId: number, id: number, now: string): Promise<void> {
      await db
        .updateTable('payment_profiles')
        .set({ is_active: 0, modified: now })
        .where('organization_id', '=', organizationId)
        .where('id', '!=', id)
        .where('is_active', '=', 1)
        .execute()
      await updateRow(db, 'payment_profiles', id, { is_active: 1, modified: now })
    },
  }
}

export type ProfileRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof paymentProfilesRepository>['findById']>>
>
