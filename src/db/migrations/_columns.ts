// Column sets shared by migrations' tables: the record's times and error texts, and the two kinds
// of reference to another table's row.
import type { ColumnDefinitionBuilder, CreateTableBuilder } from 'kysely'

/** The record's `created` and `modified` times (ISO text; `timestamptz` once native_pg_types ran). */
export function timestamps<T extends string, C extends string>(t: CreateTableBuilder<T, C>) {
  return t
    .addColumn('created', 'varchar(32)', (c) => c.notNull())
    .addColumn('modified', 'varchar(32)', (c) => c.notNull())
}

/** The record's `error_message` and `error_traceback` texts (empty when there is no error). */
export function errorTexts<T extends string, C extends string>(t: CreateTableBuilder<T, C>) {
  return t
    .addColumn('error_message', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('error_traceback', 'text', (c) => c.notNull().defaultTo(''))
}

/** A required reference to `table`'s row, whose deletion deletes this row. */
export function ownedBy(table: string) {
  return (c: ColumnDefinitionBuilder) => c.notNull().references(`${table}.id`).onDelete('cascade')
}

/** An optional reference to `table`'s row, cleared when that row is deleted. */
export function clearedWith(table: string) {
  return (c: ColumnDefinitionBuilder) => c.references(`${table}.id`).onDelete('set null')
}
