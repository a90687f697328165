import type { Kysely } from 'kysely'
import { clearedWith, errorTexts, ownedBy, timestamps } from './_columns.js'
import { createIndexes, createRecordTable, dropTables, jsonType } from './_helpers.js'

export async function up(db: Kysely<any>): Promise<void> {
  const json = jsonType(db)

  // ---- backend resource requests ----
  await createRecordTable(db, 'backend_resource_requests')
    .addColumn('offering_id', 'integer', ownedBy('offerings'))
    .addColumn('state', 'varchar(20)', (c) => c.notNull().defaultTo('Sent'))
    .addColumn('started', 'varchar(32)')
    .addColumn('finished', 'varchar(32)')
    .$call(errorTexts)
    .addColumn('created_by_id', 'integer', clearedWith('users'))
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'backend_resource_requests', {
    backend_resource_requests_offering_idx: ['offering_id'],
    backend_resource_requests_state_idx: ['state'],
    backend_resource_requests_created_idx: ['created'],
  })

  // ---- site agents ----
  await createRecordTable(db, 'site_agent_identities')
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('offering_id', 'integer', ownedBy('offerings'))
    .addColumn('version', 'varchar(100)')
    .addColumn('last_polled_at', 'varchar(32)')
    .addColumn('created_by_id', 'integer', clearedWith('users'))
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'site_agent_identities', {
    site_agent_identities_offering_idx: ['offering_id'],
  })

  await createRecordTable(db, 'site_agent_services')
    .addColumn('identity_id', 'integer', ownedBy('site_agent_identities'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('mode', 'varchar(100)')
    .addColumn('state', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('statistics', json, (c) => c.notNull())
    .$call(timestamps)
    .addUniqueConstraint('site_agent_services_identity_name_uq', ['identity_id', 'name'])
    .execute()
  await createIndexes(db, 'site_agent_services', {
    site_agent_services_modified_idx: ['modified'],
    site_agent_services_state_idx: ['state'],
  })

  await createRecordTable(db, 'site_agent_processors')
    .addColumn('service_id', 'integer', ownedBy('site_agent_services'))
    .addColumn('name', 'varchar(255)', (c) => c.notNull())
    .addColumn('backend_type', 'varchar(100)', (c) => c.notNull())
    .addColumn('backend_version', 'varchar(100)')
    .addColumn('last_run', 'varchar(32)')
    .$call(timestamps)
    .addUniqueConstraint('site_agent_processors_service_name_uq', ['service_id', 'name'])
    .execute()

  // ---- user group invitations and permission requests ----
  await createRecordTable(db, 'user_group_invitations')
    .addColumn('role_id', 'integer', ownedBy('roles'))
    .addColumn('scope_type', 'varchar(20)', (c) => c.notNull())
    .addColumn('scope_id', 'integer', (c) => c.notNull())
    .addColumn('customer_id', 'integer', ownedBy('customers'))
    .addColumn('created_by_id', 'integer', clearedWith('users'))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('is_public', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('auto_create_project', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('auto_approve', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('project_name_template', 'varchar(255)', (c) => c.notNull().defaultTo(''))
    .addColumn('project_role_id', 'integer', clearedWith('roles'))
    .addColumn('user_affiliations', json, (c) => c.notNull())
    .addColumn('user_email_patterns', json, (c) => c.notNull())
    .addColumn('user_identity_sources', json, (c) => c.notNull())
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'user_group_invitations', {
    user_group_invitations_customer_idx: ['customer_id'],
    user_group_invitations_scope_idx: ['scope_type', 'scope_id'],
    user_group_invitations_role_idx: ['role_id'],
    user_group_invitations_created_idx: ['created'],
  })

  await createRecordTable(db, 'user_permission_requests')
    .addColumn('invitation_id', 'integer', ownedBy('user_group_invitations'))
    .addColumn('created_by_id', 'integer', ownedBy('users'))
    .addColumn('state', 'varchar(20)', (c) => c.notNull().defaultTo('pending'))
    .addColumn('reviewed_by_id', 'integer', clearedWith('users'))
    .addColumn('reviewed_at', 'varchar(32)')
    .addColumn('review_comment', 'text')
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'user_permission_requests', {
    user_permission_requests_invitation_idx: ['invitation_id'],
    user_permission_requests_user_idx: ['created_by_id', 'state'],
  })
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTables(db, [
    'user_permission_requests',
    'user_group_invitations',
    'site_agent_processors',
    'site_agent_services',
    'site_agent_identities',
    'backend_resource_requests',
  ])
}
