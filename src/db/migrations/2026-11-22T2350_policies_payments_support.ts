import { sql, type Kysely } from 'kysely'
import { clearedWith, ownedBy, timestamps } from './_columns.js'
import { createIndexes, createLinkTable, createRecordTable, dropTables, jsonType } from './_helpers.js'

export async function up(db: Kysely<any>): Promise<void> {
  const json = jsonType(db)

  // ---- payment profiles ----
  await createRecordTable(db, 'payment_profiles')
    .addColumn('name', 'varchar(150)', (c) => c.notNull())
    .addColumn('organization_id', 'integer', ownedBy('customers'))
    .addColumn('attributes', json, (c) => c.notNull())
    .addColumn('payment_type', 'varchar(30)', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'payment_profiles', {
    payment_profiles_organization_idx: ['organization_id', 'is_active'],
    payment_profiles_name_idx: ['name'],
  })
  // At most one active profile per organization. A partial unique index reads the same on
  // SQLite and PostgreSQL; the enable transaction keeps it satisfied, this makes it a guarantee.
  await sql`create unique index payment_profiles_one_active_idx on payment_profiles (organization_id) where is_active = 1`.execute(
    db,
  )

  // ---- support issues and feedback ----
  await createRecordTable(db, 'support_issues')
    .addColumn('key', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('summary', 'varchar(255)', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('caller_id', 'integer', clearedWith('users'))
    .addColumn('reporter_id', 'integer', clearedWith('users'))
    .addColumn('customer_id', 'integer', clearedWith('customers'))
    .addColumn('project_id', 'integer', clearedWith('projects'))
    .addColumn('state', 'varchar(100)', (c) => c.notNull().defaultTo('new'))
    .addColumn('resolved', 'integer', (c) => c.notNull().defaultTo(0))
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'support_issues', {
    support_issues_caller_idx: ['caller_id'],
    support_issues_customer_idx: ['customer_id'],
    support_issues_project_idx: ['project_id'],
    support_issues_reporter_idx: ['reporter_id'],
    support_issues_created_idx: ['created'],
  })

  await createRecordTable(db, 'support_feedbacks')
    // One feedback per issue: the unique index makes a racing second submission fail.
    .addColumn('issue_id', 'integer', (c) =>
      c.notNull().unique().references('support_issues.id').onDelete('cascade'),
    )
    .addColumn('evaluation', 'integer', (c) => c.notNull())
    .addColumn('comment', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('state', 'varchar(30)', (c) => c.notNull().defaultTo('OK'))
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'support_feedbacks', {
    support_feedbacks_created_idx: ['created'],
    support_feedbacks_evaluation_idx: ['evaluation'],
  })

  // ---- offering estimated cost policies ----
  await createRecordTable(db, 'cost_policies')
    .addColumn('offering_id', 'integer', ownedBy('offerings'))
    .addColumn('actions', 'varchar(500)', (c) => c.notNull())
    .addColumn('options', json, (c) => c.notNull())
    .addColumn('limit_cost', 'bigint', (c) => c.notNull())
    .addColumn('period', 'integer', (c) => c.notNull().defaultTo(2))
    .addColumn('apply_to_all', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('has_fired', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('fired_datetime', 'varchar(32)')
    // When a re-evaluation at the next period start has been scheduled (dedupes those jobs).
    .addColumn('recheck_at', 'varchar(32)')
    .addColumn('created_by_id', 'integer', clearedWith('users'))
    .$call(timestamps)
    .execute()
  await createIndexes(db, 'cost_policies', {
    cost_policies_offering_idx: ['offering_id', 'has_fired'],
    cost_policies_created_idx: ['created'],
  })

  await createLinkTable(db, 'cost_policy_organization_groups', {
    policy_id: 'cost_policies',
    organization_group_id: 'organization_groups',
  }).execute()
  await createIndexes(db, 'cost_policy_organization_groups', {
    cost_policy_organization_groups_group_idx: ['organization_group_id'],
  })
}

export async function down(db: Kysely<any>): Promise<void> {
  await dropTables(db, [
    'cost_policy_organization_groups',
    'cost_policies',
    'support_feedbacks',
    'support_issues',
    'payment_profiles',
  ])
}
