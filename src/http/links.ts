// Hyperlinks: building absolute `url` fields and resolving URLs given in requests.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../db/tables.js'
import { fieldError } from './errors.js'
import { normalizeUuid } from './uuid.js'
import { toBool } from '../db/values.js'

/** `${base}/api/${path}/${uuid}/`, the one way every area renders a hyperlink. */
export function urlOf(base: string, path: string, uuid: string | null | undefined): string | null {
  return uuid ? `${base}/api/${path}/${uuid}/` : null
}

/**
 * The uuid in a hyperlink to `/api/<path>/<uuid>/` (absolute or path-only URL), or null when the
 * value is not such a link.
 */
export function uuidFromLink(value: unknown, path: string): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null
  const pathname = value.startsWith('/') ? value.split('?')[0]! : urlPath(value)
  if (pathname === null) return null
  const prefix = `/api/${path}/`
  if (!pathname.startsWith(prefix)) return null
  const rest = pathname.slice(prefix.length).replace(/\/$/, '')
  if (!rest || rest.includes('/')) return null
  return normalizeUuid(rest)
}

/**
 * A link as this server writes them: http or https, a host name or dotted IPv4 address, a port,
 * and a path of letters, digits, '-', '_' and '/' only. For such a link the WHATWG parser's
 * pathname is the path as written (nothing to percent-encode, no dot segments, no backslashes).
 */
const PLAIN_LINK = /^https?:\/\/([a-z0-9.-]+)(?::(\d{1,5}))?(\/[A-Za-z0-9_/-]*)$/
const DOMAIN = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)*$/
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/
const NUMBER = /^(?:\d+|0x[0-9a-f]*)$/

/**
 * A host the WHATWG parser accepts as written: an IPv4 address, or a name whose last label is not
 * a number (the parser reads such a name as an IPv4 address, and may refuse it).
 */
function plainHost(host: string): boolean {
  return IPV4.test(host) || (DOMAIN.test(host) && !NUMBER.test(host.slice(host.lastIndexOf('.') + 1)))
}

/**
 * The pathname of an absolute URL, as the WHATWG URL parser gives it; null when it does not
 * parse. Plain links are read without building a URL object (an order creation reads three
 * links, and parsing them took about 14 us of its time in the server); anything else goes to the
 * parser.
 */
export function urlPath(value: string): string | null {
  const m = PLAIN_LINK.exec(value)
  if (m && plainHost(m[1]!) && (m[2] === undefined || Number(m[2]) <= 65535)) return m[3]!
  try {
    return new URL(value).pathname
  } catch {
    return null
  }
}

export function invalidHyperlink(field: string): Error {
  return fieldError(field, 'Invalid hyperlink - Object does not exist.')
}

/**
 * Resolves a hyperlink field of a request body to the row id it names.
 * Wrong type → "Incorrect type", another kind of URL → "Incorrect URL match", unknown uuid → "Object
 * does not exist"; all 400 on that field.
 */
export async function resolveLink(
  db: Kysely<DB>,
  field: string,
  value: unknown,
  path: string,
  table: keyof DB,
): Promise<{ id: number; uuid: string }> {
  if (typeof value !== 'string') {
    throw fieldError(
      field,
      `Incorrect type. Expected URL string, received ${value === null ? 'null' : typeof value}.`,
    )
  }
  const uuid = uuidFromLink(value, path)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  const row = await sql<{ id: number }>`select id from ${sql.table(table)} where uuid = ${uuid}`.execute(db)
  const id = row.rows[0]?.id
  if (id === undefined) throw invalidHyperlink(field)
  return { id, uuid }
}

/** Resolves a bare uuid field (some request bodies take uuids, not URLs). */
export async function resolveUuid(
  db: Kysely<DB>,
  field: string,
  value: unknown,
  table: keyof DB,
): Promise<{ id: number; uuid: string }> {
  const uuid = normalizeUuid(value)
  if (!uuid) throw fieldError(field, 'Must be a valid UUID.')
  const row = await sql<{ id: number }>`select id from ${sql.table(table)} where uuid = ${uuid}`.execute(db)
  const id = row.rows[0]?.id
  if (id === undefined) throw fieldError(field, `Object with uuid=${uuid} does not exist.`)
  return { id, uuid }
}

/**
 * How one field of a record is read from its row: `'copy'` (the column of the field's name, null
 * when the row has none, as a left join gives), `'flag'` (a 0/1 or boolean column as a boolean),
 * `'count'` (a number, 0 when absent), `{ link: path }` (the hyperlink `/api/<path>/<uuid>/` of the
 * uuid in the column `from`, by default `<field>_uuid`; null without one), or a function of the row.
 */
export type FieldRule<R> =
  | 'copy'
  | 'flag'
  | 'count'
  | { readonly link: string; readonly from?: keyof R & string }
  | ((row: R, base: string) => unknown)

/**
 * A record's renderer declared as data: every field of the record `T`, in its order, with the
 * rule reading it from a row `R` (a column copied, converted or linked must be one of the row's).
 */
export function recordRenderer<R, T>(fields: {
  readonly [K in keyof T]-?: K extends keyof R
    ? FieldRule<R>
    : Exclude<FieldRule<R>, 'copy' | 'flag' | 'count'>
}): (base: string, row: R) => T {
  const readers = Object.entries(fields as Record<string, FieldRule<R>>).map(
    ([name, rule]) => [name, fieldReader(name, rule)] as const,
  )
  return (base, row) => {
    const out: Record<string, unknown> = {}
    for (const [name, read] of readers) out[name] = read(row, base)
    return out as T
  }
}

function fieldReader<R>(name: string, rule: FieldRule<R>): (row: R, base: string) => unknown {
  const column = (row: R) => (row as Record<string, unknown>)[name]
  if (typeof rule === 'function') return rule
  if (rule === 'copy') return (row) => column(row) ?? null
  if (rule === 'flag') return (row) => toBool(column(row))
  if (rule === 'count') return (row) => Number(column(row) ?? 0)
  const from = rule.from ?? `${name}_uuid`
  return (row, base) => urlOf(base, rule.link, (row as Record<string, unknown>)[from] as string | null)
}

/**
 * The uuid a request body's hyperlink to `/api/<path>/<uuid>/` names; 400 on `field` otherwise:
 * "Incorrect type" when it is not a string, "Incorrect URL match" when it links something else.
 */
export function linkedUuid(field: string, value: unknown, path: string): string {
  if (typeof value !== 'string') throw fieldError(field, 'Incorrect type. Expected URL string.')
  const uuid = uuidFromLink(value, path)
  if (!uuid) throw fieldError(field, 'Invalid hyperlink - Incorrect URL match.')
  return uuid
}

/** A record's own fields first: `url`, its hyperlink `/api/<path>/<uuid>/`, and `uuid`. */
export function ownLink(path: string) {
  return { url: { link: path, from: 'uuid' }, uuid: 'copy' } as const
}

/**
 * A related object's fields in a record: `<name>`, its hyperlink `/api/<path>/<uuid>/` (from the
 * column `<name>_uuid`), then the columns `<name>_<column>` shown beside it, copied (`uuid`,
 * `name`…), in that order.
 */
export function relatedLink<N extends string, C extends string>(
  name: N,
  path: string,
  ...columns: C[]
): { readonly [K in N]: { readonly link: string } } & { readonly [K in `${N}_${C}`]: 'copy' } {
  const fields: Record<string, FieldRule<unknown>> = { [name]: { link: path } }
  for (const c of columns) fields[`${name}_${c}`] = 'copy'
  return fields as ReturnType<typeof relatedLink<N, C>>
}

/**
 * The row a request body's hyperlink to `/api/<path>/<uuid>/` names, as `find` gives it (among the
 * rows the caller may link); 400 on `field` otherwise: `linkedUuid`'s, or "Object does not exist".
 */
export async function linkedRow<R>(
  field: string,
  value: unknown,
  path: string,
  find: (uuid: string) => Promise<R | undefined>,
): Promise<R> {
  return linkedFound(field, await find(linkedUuid(field, value, path)))
}

/** The row a hyperlink field named, once looked up: 400 on the field when there is none. */
export function linkedFound<R>(field: string, row: R | undefined): R {
  if (!row) throw invalidHyperlink(field)
  return row
}

/** Fields of a `recordRenderer` copied from the columns of their names, declared in one list. */
export function copied<const K extends string>(...names: K[]): Record<K, 'copy'> {
  return Object.fromEntries(names.map((n) => [n, 'copy'])) as Record<K, 'copy'>
}
