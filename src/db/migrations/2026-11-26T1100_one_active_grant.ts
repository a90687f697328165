import { sql, type Kysely } from 'kysely'

// One active grant per (user, role, scope). Two requests granting the same role at once could
// both pass the "already has it" read and insert twice; revoking then ended one row and the user
// kept the role through the other. Existing duplicates are ended first (the oldest row stays),
// then a partial unique index over the active rows makes the database refuse a second one.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    update user_roles set is_active = 0
    where is_active = 1 and id > (
      select min(o.id) from user_roles o
      where o.is_active = 1 and o.user_id = user_roles.user_id and o.role_id = user_roles.role_id
        and o.scope_type = user_roles.scope_type and o.scope_id = user_roles.scope_id
    )`.execute(db)
  await db.schema
    .createIndex('user_roles_one_active_idx')
    .on('user_roles')
    .columns(['user_id', 'role_id', 'scope_type', 'scope_id'])
    .unique()
    .where(sql.ref('is_active'), '=', 1)
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('user_roles_one_active_idx').execute()
}
