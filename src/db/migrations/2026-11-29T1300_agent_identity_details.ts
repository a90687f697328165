import { sql, type Kysely } from 'kysely'
import { types } from './_helpers.js'

// What a site agent reports about itself when it registers: the packages it runs
// (`dependencies`, a list of {package, version}), its configuration file's path and content, and
// when it last restarted. Identities registered before get an empty list and their creation time.
export async function up(db: Kysely<any>): Promise<void> {
  const t = types(db)
  await db.schema
    .alterTable('site_agent_identities')
    .addColumn('dependencies', t.json, (c) => c.notNull().defaultTo('[]'))
    .execute()
  await db.schema.alterTable('site_agent_identities').addColumn('config_file_path', 'varchar(150)').execute()
  await db.schema.alterTable('site_agent_identities').addColumn('config_file_content', 'text').execute()
  await db.schema.alterTable('site_agent_identities').addColumn('last_restarted_at', t.timestamp).execute()
  await sql`update site_agent_identities set last_restarted_at = created`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['last_restarted_at', 'config_file_content', 'config_file_path', 'dependencies']) {
    await db.schema.alterTable('site_agent_identities').dropColumn(column).execute()
  }
}
