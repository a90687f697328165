// All SQL of SSH keys: the keys a caller sees, and the keys of the users of a provider's resources.
import type { Insertable, Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'
import { tableRecords } from '../../db/rows.js'
import { joined } from '../../db/joins.js'
import { grantUnexpired } from '../../db/sql.js'

type Db = Kysely<DB> | Transaction<DB>

/**
 * Which keys a list or a look-up reaches: every key (staff and support); a user's own and the
 * shared ones; or the keys of the users of a provider organization's resources.
 */
export type KeyScope =
  { all: true } | { all: false; userId: number } | { all: false; providerCustomerId: number; now: string }

export function sshKeysRepository(db: Db) {
  const base = () => joined(db, 'ssh_keys', [['inner', 'users', 'ssh_keys.user_id']])
  const visible = (scope: KeyScope) => {
    if (scope.all) return base()
    if ('userId' in scope)
      return base().where((eb) =>
        eb.or([eb('ssh_keys.user_id', '=', scope.userId), eb('ssh_keys.is_shared', '=', 1)]),
      )
    // Holders of a role (now) on a project with a resource (not Terminated) of the provider's offerings.
    return base().where((eb) =>
      eb.exists(
        eb
          .selectFrom('user_roles')
          .innerJoin('resources', 'resources.project_id', 'user_roles.scope_id')
          .innerJoin('offerings', 'offerings.id', 'resources.offering_id')
          .select('user_roles.id')
          .whereRef('user_roles.user_id', '=', 'ssh_keys.user_id')
          .where('user_roles.scope_type', '=', 'project')
          .where('user_roles.is_active', '=', 1)
          .where((g) => grantUnexpired(g, scope.now))
          .where('resources.state', '<>', 'Terminated')
          .where('offerings.customer_id', '=', scope.providerCustomerId),
      ),
    )
  }
  const select = (q: ReturnType<typeof base>) =>
    q.select([
      'ssh_keys.id',
      'ssh_keys.uuid',
      'ssh_keys.name',
      'ssh_keys.public_key',
      'ssh_keys.fingerprint_md5',
      'ssh_keys.fingerprint_sha256',
      'ssh_keys.fingerprint_sha512',
      'ssh_keys.is_shared',
      'ssh_keys.user_id',
      'users.uuid as user_uuid',
    ])
  return {
    ...tableRecords(db, { table: 'ssh_keys', base, visible, select }),
    /**
     * Inserts the key unless its user has a key of that name: its id, or undefined when the name
     * is taken. One statement, so of two racing keys of one name exactly one is written.
     */
    async insertIfNameFree(values: Insertable<DB['ssh_keys']>): Promise<number | undefined> {
      const r = await db
        .insertInto('ssh_keys')
        .values(values)
        .onConflict((oc) => oc.columns(['user_id', 'name']).doNothing())
        .returning('id')
        .executeTakeFirst()
      return r?.id
    },
    providerByUuid(uuid: string) {
      return db
        .selectFrom('service_providers')
        .select(['id', 'uuid', 'customer_id'])
        .where('uuid', '=', uuid)
        .executeTakeFirst()
    },
    /** Does any of these offerings belong to the organization? */
    async anyOfferingOf(offeringIds: readonly number[], customerId: number): Promise<boolean> {
      if (!offeringIds.length) return false
      const r = await db
        .selectFrom('offerings')
        .select('id')
        .where('customer_id', '=', customerId)
        .where('id', 'in', [...offeringIds])
        .executeTakeFirst()
      return !!r
    },
  }
}

export type SshKeyRow = NonNullable<Awaited<ReturnType<ReturnType<typeof sshKeysRepository>['findById']>>>
