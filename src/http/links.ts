// Hyperlinks: building absolute `url` fields and resolving URLs given in requests.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../db/tables.js'
import { fieldError } from './errors.js'
import { normalizeUuid } from './uuid.js'

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
  let pathname: string
  try {
    pathname = value.startsWith('/') ? value.split('?')[0]! : new URL(value).pathname
  } catch {
    return null
  }
  const prefix = `/api/${path}/`
  if (!pathname.startsWith(prefix)) return null
  const rest = pathname.slice(prefix.length).replace(/\/$/, '')
  if (!rest || rest.includes('/')) return null
  return normalizeUuid(rest)
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
