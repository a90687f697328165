import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'

// One active grant per (user, role, scope). Two requests granting the same role at once could
// both pass the "already has it" read and insert twice; revoking then ended one row and the user
// kept the role through the other. Existing duplicates are ended first (the oldest row stays),
// then a partial unique index over the active rows makes the database refuse a second one.
// The flag is written as each dialect stores it (an integer here, a boolean once the columns have
// their native PostgreSQL types), so the step can run again on a later schema.
export async function up(db: Kysely<any>): Promise<void> {
  const [on, off] =
    isPostgres(db) && (await flagIsBoolean(db)) ? [sql.lit(true), sql.lit(false)] : [sql.lit(1), sql.lit(0)]
  await sql`
    update user_roles set is_active = ${off}
    where is_active = ${on} and id > (
      select min(o.id) from user_roles o
      where o.is_active = ${on} and o.user_id = user_roles.user_id and o.role_id = user_roles.role_id
        and o.scope_type = user_roles.scope_type and o.scope_id = user_roles.scope_id
    )`.execute(db)
  await db.schema
    .createIndex('user_roles_one_active_idx')
    .on('user_roles')
    .columns(['user_id', 'role_id', 'scope_type', 'scope_id'])
    .unique()
    .where(sql.ref('is_active'), '=', on)
    .execute()
}

async function flagIsBoolean(db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ type: string }>`
    select data_type as type from information_schema.columns
    where table_schema = current_schema() and table_name = 'user_roles' and column_name = 'is_active'`.execute(
    db,
  )
  return rows[0]?.type === 'boolean'
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('user_roles_one_active_idx').execute()
}
