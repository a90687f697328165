import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { clearedWith, ownedBy, timestamps } from './_columns.js'
import {
  createIndexes,
  createLinkTable,
  createRecordTable,
  dropTables,
  jsonType,
  withId,
} from './_helpers.js'

export async function up(db: Kysely<any>): Promise<void> {
  const json = jsonType(db)

  await createRecordTable(db, 'users')
    .addColumn('username', 'varchar(128)', (c) => c.notNull().unique())
    .addColumn('email', 'varchar(320)', (c) => c.notNull().defaultTo(''))
    .addColumn('full_name', 'varchar(200)', (c) => c.notNull().defaultTo(''))
    .addColumn('civil_number', 'varchar(50)')
    .addColumn('is_staff', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_support', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('affiliations', json, (c) => c.notNull())
    .addColumn('identity_source', 'varchar(100)', (c) => c.notNull().defaultTo(''))
    .addColumn('image', 'varchar(500)')
    .addColumn('password_hash', 'varchar(300)')
    .$call(timestamps)
    .execute()

  await withId(db, db.schema.createTable('tokens'))
    .addColumn('user_id', 'integer', ownedBy('users'))
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .execute()
  await createIndexes(db, 'tokens', { tokens_user_idx: ['user_id'] })

  await createRecordTable(db, 'organization_groups')
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('parent_id', 'integer', clearedWith('organization_groups'))
    .$call(timestamps)
    .execute()

  await createRecordTable(db, 'customers')
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('abbreviation', 'varchar(20)', (c) => c.notNull().defaultTo(''))
    .addColumn('native_name', 'varchar(160)', (c) => c.notNull().defaultTo(''))
    .addColumn('slug', 'varchar(150)', (c) => c.notNull())
    .addColumn('email', 'varchar(320)', (c) => c.notNull().defaultTo(''))
    .addColumn('image', 'varchar(500)')
    .addColumn('blocked', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .execute()

  await createLinkTable(db, 'customer_organization_groups', {
    customer_id: 'customers',
    organization_group_id: 'organization_groups',
  }).execute()

  await createRecordTable(db, 'projects')
    .addColumn('name', 'varchar(500)', (c) => c.notNull())
    .addColumn('customer_id', 'integer', ownedBy('customers'))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('slug', 'varchar(150)', (c) => c.notNull())
    .addColumn('start_date', 'varchar(10)')
    .addColumn('end_date', 'varchar(10)')
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'projects', { projects_customer_idx: ['customer_id'] })

  await createRecordTable(db, 'roles')
    .addColumn('name', 'varchar(150)', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('content_type', 'varchar(20)', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .execute()

  // A grant of a role on a scope (customer, project or offering). scope_id points into the
  // table named by scope_type; only active, unexpired rows count.
  await createRecordTable(db, 'user_roles')
    .addColumn('user_id', 'integer', ownedBy('users'))
    .addColumn('role_id', 'integer', ownedBy('roles'))
    .addColumn('scope_type', 'varchar(20)', (c) => c.notNull())
    .addColumn('scope_id', 'integer', (c) => c.notNull())
    .addColumn('expiration_time', 'varchar(32)')
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_by_id', 'integer', clearedWith('users'))
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .execute()
  await createIndexes(db, 'user_roles', {
    user_roles_user_idx: ['user_id', 'is_active'],
    user_roles_scope_idx: ['scope_type', 'scope_id', 'is_active'],
  })

  await withId(db, db.schema.createTable('jobs'))
    .addColumn('kind', 'varchar(100)', (c) => c.notNull())
    .addColumn('payload', json, (c) => c.notNull())
    .addColumn('state', 'varchar(20)', (c) => c.notNull().defaultTo('queued'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull().defaultTo(5))
    .addColumn('run_at', 'varchar(32)', (c) => c.notNull())
    .addColumn('locked_by', 'varchar(100)')
    .addColumn('locked_at', 'varchar(32)')
    .addColumn('last_error', 'text')
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('finished', 'varchar(32)')
    .execute()
  await createIndexes(db, 'jobs', { jobs_claim_idx: ['state', 'run_at', 'id'] })

  // Notification and audit events (policy notifications, state changes worth telling a user).
  await createRecordTable(db, 'events')
    .addColumn('event_type', 'varchar(100)', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('recipient_user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('context', json, (c) => c.notNull())
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .execute()
  await createIndexes(db, 'events', { events_type_idx: ['event_type', 'created'] })

  // The fixed roles. Their permissions live in code (src/http/permissions.ts); the rows give
  // them stable uuids for the API.
  const roles: [string, string, string][] = [
    ['CUSTOMER.OWNER', 'customer', 'Organization owner'],
    ['CUSTOMER.MANAGER', 'customer', 'Service provider manager'],
    ['CUSTOMER.SUPPORT', 'customer', 'Organization support'],
    ['PROJECT.ADMIN', 'project', 'Project administrator'],
    ['PROJECT.MANAGER', 'project', 'Project manager'],
    ['PROJECT.MEMBER', 'project', 'Project member'],
    ['OFFERING.MANAGER', 'offering', 'Offering manager'],
  ]
  for (const [name, contentType, description] of roles) {
    await db
      .insertInto('roles')
      .values({ uuid: randomUUID(), name, content_type: contentType, description, is_active: 1 })
      .execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTables(db, [
    'events',
    'jobs',
    'user_roles',
    'roles',
    'projects',
    'customer_organization_groups',
    'customers',
    'organization_groups',
    'tokens',
    'users',
  ])
}
