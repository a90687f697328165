// The OpenAPI side of the resource kit: operationIds and the documented query parameters.
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import { PARSED_BY_HANDLER } from './plumbing.js'

/** Where a response schema keeps its record's required fields for the document (`finishRecord`). */
export const RECORD_REQUIRED = 'x-record-required'

/**
 * The operationId of an operation, named as the reference's schema generator names it: the path's
 * segments after `/api/`, without its parameters, `-` replaced by `_`, joined with `_`, then the
 * suffix (`list`, `count`, `create`, `retrieve`, `update`, `partial_update`, `destroy`); an
 * action's name is already the last segment, so a POST action takes no suffix
 * (`marketplace_orders_approve_by_consumer`) and a GET action takes `retrieve` or `list`. Case is
 * kept: `/api/cloudB-floating-ips/` lists as `cloudB_floating_ips_list`.
 */
export function operationId(url: string, suffix: string | null): string {
  const tokens = url
    .replace(/^\/api\//, '')
    .split('/')
    .filter((s) => s && !s.startsWith(':') && !s.startsWith('{'))
    .map((s) => s.replace(/-/g, '_'))
  return (suffix ? [...tokens, suffix] : tokens).join('_')
}

/** `a`/`an` before a noun, for summaries. */
export function article(noun: string): string {
  return /^[aeiou]/i.test(noun) ? 'an' : 'a'
}

export function isArraySchema(schema: TSchema | null): boolean {
  return !!schema && (schema as { type?: unknown }).type === 'array'
}

export const PAGE = Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('last')], {
  description: 'page number from 1, or "last"',
})
export const PAGE_SIZE = Type.Integer({ minimum: 1, description: 'results per page (default 10, max 300)' })

/** The query schema documents the parameters; the handler parses them (no validator is compiled). */
export function parsedByHandler<T extends TObject>(schema: T): T {
  Object.defineProperty(schema, PARSED_BY_HANDLER, { value: true })
  return schema
}

export function fieldParam(fields: readonly string[]) {
  return Type.Optional(
    Type.Array(Type.String({ enum: [...fields] }), {
      description: 'fields to include (repeatable, comma-separated); unknown names are ignored',
    }),
  )
}

export function orderParam(fields: Readonly<Record<string, string>> | undefined) {
  if (!fields) {
    return Type.Optional(Type.Array(Type.String(), { description: 'ignored: this list has a fixed order' }))
  }
  const names = Object.keys(fields)
  return Type.Optional(
    Type.Array(Type.String({ enum: [...names, ...names.map((n) => `-${n}`)] }), {
      description: 'ordering (repeatable, comma-separated; `-` descends)',
    }),
  )
}
