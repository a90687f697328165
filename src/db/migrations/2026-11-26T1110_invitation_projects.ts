import type { Kysely } from 'kysely'
import { ownedBy } from './_columns.js'
import { createIndexes, withId } from './_helpers.js'

// The projects an invitation with auto_create_project created, per user. An approval reuses only
// such a project; before, it took any project of the rendered name in the customer, so a user
// whose full name matched an existing project's name became its administrator.
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('invitation_projects'))
    .addColumn('invitation_id', 'integer', ownedBy('user_group_invitations'))
    .addColumn('user_id', 'integer', ownedBy('users'))
    .addColumn('project_id', 'integer', ownedBy('projects'))
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .execute()
  await createIndexes(db, 'invitation_projects', {
    invitation_projects_user_idx: ['invitation_id', 'user_id'],
  })
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('invitation_projects').ifExists().execute()
}
