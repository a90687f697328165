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
  table: string
  oid: number
  name: string
  num: number
  /** `varchar` or `int4`. */
  type: string
}

interface Conversion {
  column: string
  type: 'uuid' | 'timestamptz' | 'boolean'
  using: string
  /** Flags: the column's number, to read its default and set it again after the change. */
  num?: number
}

function conversionOf(c: Column): Conversion | undefined {
  const col = `"${c.name}"`
  if (c.type === 'varchar' && isUuidColumn(c.name)) {
    return { column: c.name, type: 'uuid', using: `nullif(${col}, '')::uuid` }
  }
  if (c.type === 'varchar' && isTimestampColumn(c.name)) {
    return { column: c.name, type: 'timestamptz', using: `nullif(${col}, '')::timestamptz` }
  }
  if (c.type === 'int4' && isFlagColumn(c.name)) {
    return { column: c.name, type: 'boolean', using: `${col} <> 0`, num: c.num }
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

// The catalog is read without its formatting functions (pg_get_*def) except on rows of this
// schema already picked out by oid: other schemas may be dropped meanwhile (tests run in parallel
// schemas), and such a function evaluated on a vanished relation's row fails.
export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return
  const { rows: columns } = await sql<Column>`
    select c.relname as "table", c.oid::bigint as oid, a.attname as name, a.attnum as num, t.typname as type
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid
    join pg_type t on t.oid = a.atttypid
    where n.nspname = current_schema() and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped
      and c.relname not like 'kysely\\_%'
    order by c.relname, a.attnum`.execute(db)
  const byTable = new Map<string, { oid: number; convs: Conversion[] }>()
  for (const c of columns) {
    const conv = conversionOf(c)
    if (!conv) continue
    const entry = byTable.get(c.table) ?? { oid: c.oid, convs: [] }
    entry.convs.push(conv)
    byTable.set(c.table, entry)
  }
  for (const [table, { oid, convs }] of byTable) {
    const t = `"${table}"`
    const flags = convs.filter((c) => c.type === 'boolean')
    // Triggers naming a column (`after update of ...`) and partial indexes on a flag block the
    // change: they are dropped and made again from their own definitions.
    const { rows: triggers } = await sql<{ name: string; def: string }>`
      select tgname as name, pg_get_triggerdef(oid) as def from pg_trigger
      where tgrelid = ${oid} and not tgisinternal`.execute(db)
    const { rows: indexes } = await sql<{ name: string; def: string }>`
      select c.relname as name, pg_get_indexdef(i.indexrelid) as def
      from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = ${oid} and i.indpred is not null`.execute(db)
    const partial = indexes.filter((i) => flags.some((f) => i.def.includes(f.column)))
    const defaults = new Map<string, string>()
    for (const f of flags) {
      const { rows } = await sql<{ def: string }>`
        select pg_get_expr(adbin, adrelid) as def from pg_attrdef where adrelid = ${oid} and adnum = ${f.num}`.execute(
        db,
      )
      if (rows[0]) defaults.set(f.column, rows[0].def.replace(/::integer$/, '') === '0' ? 'false' : 'true')
    }
    for (const tr of triggers) await sql.raw(`drop trigger "${tr.name}" on ${t}`).execute(db)
    for (const i of partial) await sql.raw(`drop index "${i.name}"`).execute(db)
    const clauses = convs.flatMap((c) => [
      ...(defaults.has(c.column) ? [`alter column "${c.column}" drop default`] : []),
      `alter column "${c.column}" type ${c.type} using ${c.using}`,
      ...(defaults.has(c.column) ? [`alter column "${c.column}" set default ${defaults.get(c.column)}`] : []),
    ])
    await sql.raw(`alter table ${t} ${clauses.join(', ')}`).execute(db)
    const flagNames = flags.map((f) => f.column)
    for (const i of partial) await sql.raw(booleanPredicate(i.def, flagNames)).execute(db)
    for (const tr of triggers) await sql.raw(tr.def).execute(db)
  }
}
