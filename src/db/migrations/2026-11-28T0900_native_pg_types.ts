import { sql, type Kysely } from 'kysely'
import { isPostgres } from './_helpers.js'

// PostgreSQL only: uuids, timestamps and flags stored as `uuid`, `timestamptz` and `boolean`
// instead of text and integers, keeping every row. (JSON columns are `jsonb` and decimals
// `numeric` already; SQLite keeps its types.) The columns are found by their names in the
// catalog, not listed, so a column an earlier migration added is converted too (see
// docs/decisions.md); later migrations declare native types themselves (`types` in _helpers.ts).

/** Text columns holding a uuid. */
export const isUuidColumn = (name: string) => name === 'uuid' || name.endsWith('_uuid')

/** Text columns holding an ISO-8601 timestamp. */
export const isTimestampColumn = (name: string) =>
  ['created', 'modified', 'started', 'finished', 'last_run', 'expiration_time'].includes(name) ||
  /_(at|datetime)$/.test(name)

/** Integer columns holding 0/1. */
export const isFlagColumn = (name: string) =>
  /^(is|has|auto|enable)_/.test(name) ||
  ['shared', 'billable', 'archived', 'blocked', 'resolved', 'apply_to_all'].includes(name)

interface Column {
  table_name: string
  column_name: string
  data_type: string
  column_default: string | null
}

interface Conversion {
  column: string
  type: 'uuid' | 'timestamptz' | 'boolean'
  using: string
  /** The default to set again after the change (flags only). */
  default?: string
}

function conversionOf(c: Column): Conversion | undefined {
  const col = `"${c.column_name}"`
  if (c.data_type === 'character varying' && isUuidColumn(c.column_name)) {
    return { column: c.column_name, type: 'uuid', using: `nullif(${col}, '')::uuid` }
  }
  if (c.data_type === 'character varying' && isTimestampColumn(c.column_name)) {
    return { column: c.column_name, type: 'timestamptz', using: `nullif(${col}, '')::timestamptz` }
  }
  if (c.data_type === 'integer' && isFlagColumn(c.column_name)) {
    const old = c.column_default?.replace(/::integer$/, '')
    const dflt = old === undefined ? undefined : old === '0' ? 'false' : 'true'
    return { column: c.column_name, type: 'boolean', using: `${col} <> 0`, ...(dflt ? { default: dflt } : {}) }
  }
  return undefined
}

/** A partial index's predicate on flags, rewritten for booleans: `(x = 1)` → `x`, `(x = 0)` → `(NOT x)`. */
export function booleanPredicate(def: string, flags: readonly string[]): string {
  let out = def
  for (const f of flags) {
    out = out
      .replace(new RegExp(`\\(${f} = 1\\)`, 'g'), `${f}`)
      .replace(new RegExp(`\\(${f} = 0\\)`, 'g'), `(NOT ${f})`)
  }
  return out
}

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  const { rows: columns } = await sql<Column>`
    select table_name, column_name, data_type, column_default from information_schema.columns
    where table_schema = current_schema() and table_name not like 'kysely\\_%'
    order by table_name, ordinal_position`.execute(db)
  const byTable = new Map<string, Conversion[]>()
  for (const c of columns) {
    const conv = conversionOf(c)
    if (!conv) continue
    byTable.set(c.table_name, [...(byTable.get(c.table_name) ?? []), conv])
  }
  for (const [table, convs] of byTable) {
    const t = `"${table}"`
    const flags = convs.filter((c) => c.type === 'boolean').map((c) => c.column)
    // Triggers naming a column (`after update of ...`) and partial indexes on a flag block the
    // change: they are dropped and made again from their own definitions.
    const { rows: triggers } = await sql<{ name: string; def: string }>`
      select tgname as name, pg_get_triggerdef(oid) as def from pg_trigger
      where tgrelid = ${sql.lit(t)}::regclass and not tgisinternal`.execute(db)
    const { rows: indexes } = await sql<{ name: string; def: string }>`
      select indexname as name, indexdef as def from pg_indexes
      where schemaname = current_schema() and tablename = ${table} and indexdef like '% WHERE %'`.execute(db)
    const partial = indexes.filter((i) => flags.some((f) => i.def.includes(f)))
    for (const tr of triggers) await sql.raw(`drop trigger "${tr.name}" on ${t}`).execute(db)
    for (const i of partial) await sql.raw(`drop index "${i.name}"`).execute(db)
    const clauses = convs.flatMap((c) => [
      ...(c.type === 'boolean' ? [`alter column "${c.column}" drop default`] : []),
      `alter column "${c.column}" type ${c.type} using ${c.using}`,
      ...(c.default ? [`alter column "${c.column}" set default ${c.default}`] : []),
    ])
    await sql.raw(`alter table ${t} ${clauses.join(', ')}`).execute(db)
    for (const i of partial) await sql.raw(booleanPredicate(i.def, flags)).execute(db)
    for (const tr of triggers) await sql.raw(tr.def).execute(db)
  }
}
