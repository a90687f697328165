import type { Kysely } from 'kysely'
import { ownedBy } from './_columns.js'
import { createIndexes, dropTables, types, withId } from './_helpers.js'

// The user side of an offering: a user's account on an offering (its username on the provider's
// backend and the account's state), which user attributes the offering shows its provider, the
// users' public SSH keys, the project service accounts and course accounts a provider's backend
// keeps, and per-user limits of a resource's components.
//
// A component limit names its component by type (the offering component's `type`, unique within
// the offering) beside the resource, so it needs no reference to a components table.

export async function up(db: Kysely<any>): Promise<void> {
  const t = types(db)
  const record = (name: string) =>
    withId(db, db.schema.createTable(name)).addColumn('uuid', t.uuid, (c) => c.notNull().unique())

  await record('offering_users')
    .addColumn('offering_id', 'integer', ownedBy('offerings'))
    .addColumn('user_id', 'integer', ownedBy('users'))
    .addColumn('username', 'varchar(100)')
    .addColumn('state', 'varchar(40)', (c) => c.notNull().defaultTo('Requested'))
    .addColumn('runtime_state', 'varchar(40)', (c) => c.notNull().defaultTo('Active'))
    .addColumn('is_restricted', t.flag, (c) => c.notNull().defaultTo(false))
    .addColumn('service_provider_comment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('service_provider_comment_url', 'varchar(500)', (c) => c.notNull().defaultTo(''))
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('offering_users_offering_user_key', ['offering_id', 'user_id'])
    .execute()
  await createIndexes(db, 'offering_users', {
    offering_users_user_idx: ['user_id'],
    offering_users_offering_username_idx: ['offering_id', 'username'],
  })

  await record('offering_user_attribute_configs')
    .addColumn('offering_id', 'integer', (c) => ownedBy('offerings')(c).unique())
    // The attribute names the offering exposes (a JSON list, e.g. ["username", "email"]).
    .addColumn('exposed', t.json, (c) => c.notNull())
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .execute()

  await record('ssh_keys')
    .addColumn('user_id', 'integer', ownedBy('users'))
    .addColumn('name', 'varchar(150)', (c) => c.notNull().defaultTo(''))
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint_md5', 'varchar(47)', (c) => c.notNull())
    .addColumn('fingerprint_sha256', 'varchar(51)', (c) => c.notNull())
    .addColumn('fingerprint_sha512', 'varchar(94)', (c) => c.notNull())
    .addColumn('is_shared', t.flag, (c) => c.notNull().defaultTo(false))
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('ssh_keys_user_name_key', ['user_id', 'name'])
    .execute()

  await record('project_service_accounts')
    .addColumn('project_id', 'integer', ownedBy('projects'))
    .addColumn('username', 'varchar(32)', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('email', 'varchar(320)', (c) => c.notNull().defaultTo(''))
    .addColumn('preferred_identifier', 'varchar(100)', (c) => c.notNull().defaultTo(''))
    .addColumn('state', 'varchar(10)', (c) => c.notNull().defaultTo('OK'))
    .addColumn('error_message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('error_traceback', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('expires_at', t.timestamp)
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .execute()
  await createIndexes(db, 'project_service_accounts', {
    project_service_accounts_project_idx: ['project_id'],
  })

  await record('course_accounts')
    .addColumn('project_id', 'integer', ownedBy('projects'))
    .addColumn('user_id', 'integer', ownedBy('users'))
    .addColumn('username', 'varchar(32)', (c) => c.notNull().defaultTo(''))
    .addColumn('email', 'varchar(320)', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('state', 'varchar(10)', (c) => c.notNull().defaultTo('OK'))
    .addColumn('error_message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('error_traceback', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .execute()
  await createIndexes(db, 'course_accounts', { course_accounts_project_idx: ['project_id'] })

  await record('component_user_usage_limits')
    .addColumn('resource_id', 'integer', ownedBy('resources'))
    .addColumn('component_type', 'varchar(50)', (c) => c.notNull())
    .addColumn('offering_user_id', 'integer', ownedBy('offering_users'))
    .addColumn('usage_limit', t.decimal, (c) => c.notNull().defaultTo(0))
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .addColumn('modified', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('component_user_usage_limits_key', [
      'resource_id',
      'component_type',
      'offering_user_id',
    ])
    .execute()
  await createIndexes(db, 'component_user_usage_limits', {
    component_user_usage_limits_user_idx: ['offering_user_id'],
  })
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTables(db, [
    'component_user_usage_limits',
    'course_accounts',
    'project_service_accounts',
    'ssh_keys',
    'offering_user_attribute_configs',
    'offering_users',
  ])
}
