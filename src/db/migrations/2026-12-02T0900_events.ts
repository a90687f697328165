import { sql, type Kysely } from 'kysely'
import { isPostgres, types } from './_helpers.js'

// The event outbox: one row per change told, written in the transaction of the change. `position`
// orders the events as they became visible (see src/areas/events/outbox.ts): on SQLite a trigger
// gives it at the insert (writes are serial), on PostgreSQL the sequencer gives it after the
// commit, one sequencer at a time; both count on the counter row of `outbox_positions`. On
// PostgreSQL a trigger wakes the listening processes when a transaction that wrote events commits.
export async function up(db: Kysely<any>): Promise<void> {
  const t = types(db)
  const pg = isPostgres(db)
  await db.schema
    .createTable('outbox_events')
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) =>
      pg ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('position', 'bigint', (c) => c.unique())
    .addColumn('uuid', t.uuid, (c) => c.notNull().unique())
    .addColumn('type', 'varchar(100)', (c) => c.notNull())
    .addColumn('object_type', 'varchar(50)', (c) => c.notNull())
    .addColumn('object_uuid', t.uuid, (c) => c.notNull())
    .addColumn('offering_uuid', t.uuid)
    .addColumn('project_uuid', t.uuid)
    .addColumn('customer_uuid', t.uuid)
    .addColumn('envelope', t.json, (c) => c.notNull())
    .addColumn('created', t.timestamp, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('outbox_events_created').on('outbox_events').column('created').execute()
  await db.schema
    .createIndex('outbox_events_type_position')
    .on('outbox_events')
    .columns(['type', 'position'])
    .execute()
  await db.schema
    .createIndex('outbox_events_unsequenced')
    .on('outbox_events')
    .column('id')
    .where(sql.ref('position'), 'is', null)
    .execute()
  await db.schema
    .createTable('outbox_positions')
    .addColumn('name', 'varchar(50)', (c) => c.primaryKey())
    .addColumn('last', 'bigint', (c) => c.notNull())
    .execute()
  await db
    .insertInto('outbox_positions')
    .values([
      { name: 'events', last: 0 },
      { name: 'purged', last: 0 },
    ])
    .execute()
  if (!pg) {
    // SQLite runs one writing transaction at a time: the position is taken from the counter by
    // the insert itself (one statement, so no other write comes between the two).
    await sql`create trigger outbox_events_position after insert on outbox_events
      when new.position is null
      begin
        update outbox_positions set last = last + 1 where name = 'events';
        update outbox_events set position = (select last from outbox_positions where name = 'events')
          where id = new.id;
      end`.execute(db)
  }
  if (pg) {
    // One notification per committing transaction (PostgreSQL folds equal ones), none on rollback;
    // the payload names the schema, so processes on other schemas of the database ignore it.
    await sql`create function outbox_outbox_events_notify() returns trigger language plpgsql as $$
      begin perform pg_notify('marketplace_events', current_schema()); return null; end $$`.execute(db)
    await sql`create trigger outbox_events_notify after insert on outbox_events
      for each statement execute function outbox_outbox_events_notify()`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`drop trigger if exists events_notify on outbox_events`.execute(db)
    await sql`drop function if exists outbox_events_notify()`.execute(db)
  }
  await db.schema.dropTable('outbox_positions').ifExists().execute()
  await db.schema.dropTable('outbox_events').ifExists().execute()
}
