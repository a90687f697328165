// Shared TypeBox pieces used by every area's schema.ts.
import {
  Type,
  type Static,
  type TSchema,
  type TObject,
  type TProperties,
  type TUnsafe,
  type SchemaOptions,
  type TLiteral,
  type TUnion,
} from '@sinclair/typebox'
import { PATTERN_MESSAGES } from './errors.js'

export const UUID_PATTERN =
  '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$'

/** A uuid in a request: hyphenated or 32 hex digits. */
export const UuidInput = Type.String({
  pattern: UUID_PATTERN,
  description: 'uuid (hyphenated or 32 hex digits)',
})
PATTERN_MESSAGES.set(UUID_PATTERN, 'Must be a valid UUID.')
/** A uuid in a response (always hyphenated). */
export const Uuid = Type.String({ format: 'uuid' })
export const DateTime = Type.String({ format: 'date-time' })
export const DateOnly = Type.String({ format: 'date' })
export const Url = Type.String({ format: 'uri' })
/** A link given in a request that the server stores and shows again (an image, an icon): an
 * absolute http(s) URL, as the reference's clients expect every `uri` they read to be. */
export const HttpUrlInput = (maxLength: number) => Type.String({ format: 'http-url', maxLength })

/** `T | null`, written as a type list so fast-json-stringify and OpenAPI 3.1 both understand it. */
export function Nullable<T extends TSchema>(
  schema: T,
  options: SchemaOptions = {},
): TUnsafe<Static<T> | null> {
  const s = schema as any
  if (typeof s.type === 'string')
    return Type.Unsafe<Static<T> | null>({ ...s, ...options, type: [s.type, 'null'] })
  return Type.Unsafe<Static<T> | null>({ ...options, anyOf: [s, { type: 'null' }] })
}

/** A request body: unknown fields are dropped (DRF ignores them), known ones are validated. */
export function Body<P extends TProperties>(props: P, options: SchemaOptions = {}): TObject<P> {
  return Type.Object(props, { additionalProperties: false, ...options })
}

/** A free-form JSON object. */
export const FreeObject = Type.Object({}, { additionalProperties: true })

/** An object of any keys, its expected keys told in its description. */
export function DescribedObject(description: string): typeof FreeObject {
  return { ...FreeObject, description }
}

/** One of a fixed set of strings (a state, a kind): an enum in the document. */
export function OneOf<T extends string>(values: readonly T[]): TUnion<TLiteral<T>[]> {
  return Type.Union(values.map((v) => Type.Literal(v)))
}
export const AnyValue = Type.Unknown()

/** Path parameter `{uuid}`: any string; malformed values simply match nothing (404). */
export const UuidParams = Type.Object({ uuid: Type.String() })

export const DetailBody = Type.Object({ detail: Type.String() }, { additionalProperties: true })
/** DRF 400 body: field name → list of messages (or nested errors). */
export const FieldErrorsBody = Type.Object(
  {},
  { additionalProperties: true, description: 'field → [messages]' },
)
export const StatusBody = Type.Object({ status: Type.String() })

/** Documented error responses, merged into route response maps. */
export const errors = {
  400: FieldErrorsBody,
  401: DetailBody,
  403: DetailBody,
  404: DetailBody,
  409: DetailBody,
}

export const StringList = Type.Array(Type.String())

/** Query schema of a list: page, page_size, field, o, plus the area's filters (all strings). */
export function ListQuery<P extends TProperties>(filters: P) {
  return Type.Object(
    {
      page: Type.Optional(Type.String({ description: 'page number from 1, or "last"' })),
      page_size: Type.Optional(Type.String({ description: 'results per page (default 10, max 300)' })),
      field: Type.Optional(StringList),
      o: Type.Optional(StringList),
      ...filters,
    },
    { additionalProperties: true },
  )
}

/** Query schema of a list in a fixed order: page, page_size, field, plus the area's filters. */
export function FixedOrderListQuery<P extends TProperties>(filters: P) {
  return Type.Object(
    {
      page: Type.Optional(Type.String({ description: 'page number from 1, or "last"' })),
      page_size: Type.Optional(Type.String({ description: 'results per page (default 10, max 300)' })),
      field: Type.Optional(StringList),
      ...filters,
    },
    { additionalProperties: true },
  )
}

/** Query schema of a retrieve: `field` only. */
export const FieldQuery = Type.Object({ field: Type.Optional(StringList) }, { additionalProperties: true })

export const NoContent = Type.Unsafe<void>({ type: 'null', description: 'No body' })
