// List filters as data: each declares its kind, the column (or repository condition) it tests,
// and from that one declaration come the parsing of the query parameter (with DRF's messages),
// the SQL condition and the typed OpenAPI parameter. Compiled once when a route is registered.
import { Type, type TSchema } from '@sinclair/typebox'
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import type { Condition } from '../db/listing.js'
import { uuidFromLink } from './links.js'
import {
  boolFilter,
  choiceFilter,
  dateTimeFilter,
  intFilter,
  single,
  uuidFilter,
  uuidListFilter,
  values,
  type Query,
} from './query.js'

/** The column a filter tests, or a condition the repository builds from the parsed value. */
export type FilterTarget<V> = string | ((eb: ExpressionBuilder<any, any>, value: V) => Expression<SqlBool>)

export interface FilterOptions {
  /** Shown in the OpenAPI parameter. */
  description?: string
}

/**
 * One filter. `parse` answers undefined when the parameter is absent (or empty), null when its
 * value can name nothing (the list is then empty, not an error), and throws a 400 on the
 * parameter when the value is malformed.
 */
export interface Filter<V = unknown> {
  readonly kind: string
  /** Takes several values (repeated and/or comma-separated); otherwise one. */
  readonly repeatable: boolean
  /** The OpenAPI schema of the parameter. */
  readonly doc: TSchema
  readonly parse: (q: Query, name: string) => V | null | undefined
  /** Without a target the value is only handed to the list's service (by name). */
  readonly target?: FilterTarget<V>
  /** The comparison made with the column. */
  readonly op: '=' | '>=' | '<=' | 'in' | 'contains'
  /** The value as stored, when it differs from the parsed one (booleans are stored as 0/1). */
  readonly stored?: (value: V) => unknown
}

function make<V>(
  kind: string,
  doc: TSchema,
  parse: Filter<V>['parse'],
  op: Filter<V>['op'],
  target: FilterTarget<V> | undefined,
  extra: Partial<Pick<Filter<V>, 'stored' | 'repeatable'>> = {},
): Filter<V> {
  return { kind, doc, parse, op, target, repeatable: false, ...extra }
}

const described = (opts: FilterOptions | undefined) =>
  opts?.description ? { description: opts.description } : {}

const listOrUndefined = <T>(xs: T[]): T[] | undefined => (xs.length ? xs : undefined)

function dateTime(kind: string, op: '>=' | '<=', description: string) {
  return (target?: FilterTarget<string>, opts?: FilterOptions): Filter<string> =>
    make(
      kind,
      Type.String({ format: 'date-time', description: opts?.description ?? description }),
      dateTimeFilter,
      op,
      target,
    )
}

/** The filter kinds. Each takes the column (or condition) it tests and options. */
export const filter = {
  /** One uuid, hyphenated or 32 hex digits; malformed → 400 "Enter a valid UUID.". */
  uuid(target?: FilterTarget<string>, opts?: FilterOptions): Filter<string> {
    return make('uuid', Type.String({ format: 'uuid', ...described(opts) }), uuidFilter, '=', target)
  },

  /** Several uuids (repeated or comma-separated): rows matching any. */
  uuids(target?: FilterTarget<string[]>, opts?: FilterOptions): Filter<string[]> {
    return make(
      'uuid list',
      Type.Array(Type.String({ format: 'uuid' }), described(opts)),
      (q, name) => listOrUndefined(uuidListFilter(q, name)),
      'in',
      target,
      { repeatable: true },
    )
  },

  /** Several strings (repeated or comma-separated, trimmed): rows matching any. */
  strings(target?: FilterTarget<string[]>, opts?: FilterOptions): Filter<string[]> {
    return make(
      'string list',
      Type.Array(Type.String(), described(opts)),
      (q, name) =>
        listOrUndefined(
          values(q, name)
            .flatMap((v) => v.split(','))
            .map((v) => v.trim())
            .filter(Boolean),
        ),
      'in',
      target,
      { repeatable: true },
    )
  },

  /**
   * A parameter with a parser of its own (a rule no kind above states), documented by `doc`; the
   * parser follows the contract of `Filter.parse`.
   */
  custom<V>(
    doc: TSchema,
    parse: (q: Query, name: string) => V | null | undefined,
    target?: FilterTarget<V>,
    opts: { repeatable?: boolean; op?: Filter<V>['op'] } = {},
  ): Filter<V> {
    return make('custom', doc, parse, opts.op ?? '=', target, { repeatable: opts.repeatable ?? false })
  },

  /** A string compared exactly. */
  exact(target?: FilterTarget<string>, opts?: FilterOptions): Filter<string> {
    return make('string', Type.String(described(opts)), single, '=', target)
  },

  /** A string the column contains, ignoring case. */
  contains(target?: FilterTarget<string>, opts?: FilterOptions): Filter<string> {
    const description = opts?.description ?? 'contains (case-insensitive)'
    return make('contains', Type.String({ description }), single, 'contains', target)
  },

  /** true/false (also 1/0, any case); any other value is ignored, as django-filter does. */
  boolean(target?: FilterTarget<boolean>, opts?: FilterOptions): Filter<boolean> {
    return make('boolean', Type.Boolean(described(opts)), boolFilter, '=', target, {
      stored: (v) => (v ? 1 : 0),
    })
  },

  /**
   * One or more of a fixed set of values (repeated): rows matching any. A value outside the set
   * → 400 "Select a valid choice.". Numbers are matched by their decimal text.
   */
  choice<C extends string | number>(
    choices: readonly C[],
    target?: FilterTarget<C[]>,
    opts?: FilterOptions,
  ): Filter<C[]> {
    const byText = new Map(choices.map((c) => [String(c), c]))
    const texts = [...byText.keys()]
    const numeric = choices.every((c) => typeof c === 'number')
    const item = numeric
      ? Type.Integer({ enum: [...choices] as number[] })
      : Type.String({ enum: [...choices] as string[] })
    return make(
      'choice list',
      Type.Array(item, described(opts)),
      (q, name) => listOrUndefined(choiceFilter(q, name, texts).map((t) => byText.get(t)!)),
      'in',
      target,
      { repeatable: true },
    )
  },

  /** A date or date-time (UTC unless an offset is given): rows at or after it. */
  after: dateTime('date-time after', '>=', 'at or after (date-time)'),

  /** A date or date-time: rows at or before it. */
  before: dateTime('date-time before', '<=', 'at or before (date-time)'),

  /** A whole number; anything else → 400 "Enter a whole number.". */
  integer(target?: FilterTarget<number>, opts?: FilterOptions): Filter<number> {
    return make('integer', Type.Integer(described(opts)), intFilter, '=', target)
  },

  /**
   * A hyperlink to `/api/<path>/<uuid>/`, compared by its uuid. A URL of another kind matches
   * nothing (not a 400), as the reference's hyperlinked filters do.
   */
  link(path: string, target?: FilterTarget<string>, opts?: FilterOptions): Filter<string> {
    const description = opts?.description ?? `URL of /api/${path}/<uuid>/`
    return make(
      'link',
      Type.String({ format: 'uri', description }),
      (q, name) => {
        const v = single(q, name)
        return v === undefined ? undefined : uuidFromLink(v, path)
      },
      '=',
      target,
    )
  },
}

export type FilterSet = Record<string, Filter<any>>

/** The values of a filter set's parameters, by name (null: matches nothing). */
export type FilterValues<F extends FilterSet> = {
  [K in keyof F]?: F[K] extends Filter<infer V> ? V | null : never
}

export interface ParsedFilters<F extends FilterSet> {
  values: FilterValues<F>
  where: Condition[]
}

const NONE: Condition = { op: 'none' }

/** Parses every filter of the set, in declaration order (the first malformed one answers 400). */
export function compileFilters<F extends FilterSet>(filters: F) {
  const entries = Object.entries(filters)
  return function parse(q: Query): ParsedFilters<F> {
    const values: Record<string, unknown> = {}
    const where: Condition[] = []
    for (const [name, f] of entries) {
      const v = f.parse(q, name)
      if (v === undefined) continue
      values[name] = v
      const target = f.target
      if (target === undefined) continue
      if (v === null) where.push(NONE)
      else if (typeof target === 'string') {
        const value = f.stored ? f.stored(v) : v
        where.push({ op: f.op, column: target, value })
      } else where.push({ op: 'sql', build: (eb) => target(eb, v) })
    }
    return { values: values as FilterValues<F>, where }
  }
}
