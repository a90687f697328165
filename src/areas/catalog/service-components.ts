// What an offering bills: its components (the record, the provider's create / update / remove
// actions, the built-in ones of its type, those given inline at creation) and the rule a
// resource's limits follow against them (`checkLimits`).
import type { AppContext } from '../../context.js'
import { fromBool, isoNow, parseJson, toBool } from '../../db/values.js'
import { AppError, FieldErrorSet, fieldError, forbidden, notFound } from '../../http/errors.js'
import type { Actor } from '../../http/permissions.js'
import { normalizeUuid } from '../../http/uuid.js'
import { canUpdateOffering } from './access.js'
import { allocatedLimits, limitErrors } from './limits.js'
import { builtinComponents } from './offering-types.js'
import type { Db } from './repository.js'
import { componentsRepository, planComponentsRepository, type ComponentRow } from './repository-components.js'
import { offeringsRepository } from './repository-offerings.js'
import {
  BILLING_TYPES,
  LIMIT_PERIODS,
  type OfferingComponent,
  type OfferingComponentWrite,
} from './schema.js'
import { findVisible, type OfferingRow } from './service-links.js'

// ---- the record ----

/** The component as the offering record shows it. */
export function toComponent(r: ComponentRow): OfferingComponent {
  const builtin = builtinComponents(r.offering_type).find((c) => c.type === r.type)
  return {
    uuid: r.uuid,
    offering_uuid: r.offering_uuid,
    billing_type: r.billing_type as OfferingComponent['billing_type'],
    type: r.type,
    name: r.name,
    description: r.description,
    measured_unit: r.measured_unit,
    unit_factor: Number(r.unit_factor),
    limit_period: r.limit_period as OfferingComponent['limit_period'],
    limit_amount: r.limit_amount,
    article_code: r.article_code,
    max_value: r.max_value,
    min_value: r.min_value,
    max_available_limit: r.max_available_limit,
    is_boolean: toBool(r.is_boolean),
    default_limit: r.default_limit,
    factor: builtin?.factor ?? null,
    is_builtin: builtin !== undefined,
    is_prepaid: toBool(r.is_prepaid),
    overage_component: r.overage_uuid,
    min_prepaid_duration: r.min_prepaid_duration,
    max_prepaid_duration: r.max_prepaid_duration,
    prepaid_duration_step: r.prepaid_duration_step,
    min_renewal_duration: r.min_renewal_duration,
    max_renewal_duration: r.max_renewal_duration,
    renewal_duration_step: r.renewal_duration_step,
  }
}

/** The components of each offering, by name. */
export async function componentsOf(
  ctx: AppContext,
  offeringIds: readonly number[],
): Promise<Map<number, OfferingComponent[]>> {
  const out = new Map<number, OfferingComponent[]>()
  for (const r of await componentsRepository(ctx.db).listByOfferings(offeringIds)) {
    out.set(r.offering_id, [...(out.get(r.offering_id) ?? []), toComponent(r)])
  }
  return out
}

// ---- a component's values ----

const choice = (field: string, allowed: readonly string[], v: unknown): string => {
  if (typeof v !== 'string' || !allowed.includes(v))
    throw fieldError(field, `"${String(v)}" is not a valid choice.`)
  return v
}

/** Settable only on prepaid components. */
const PREPAID_ONLY = [
  'min_prepaid_duration',
  'max_prepaid_duration',
  'prepaid_duration_step',
  'min_renewal_duration',
  'max_renewal_duration',
  'renewal_duration_step',
] as const

/** Copied as given (null allowed where the schema allows it). */
const PLAIN = [
  'type',
  'name',
  'description',
  'measured_unit',
  'unit_factor',
  'limit_amount',
  'article_code',
  'max_value',
  'min_value',
  'max_available_limit',
  'default_limit',
  ...PREPAID_ONLY,
] as const

/** The built-in components' type, name and unit are fixed. */
const BUILTIN_FIXED = ['type', 'name', 'measured_unit'] as const

/**
 * The column values of a component body (only the keys given), its field rules checked: the
 * choices of `billing_type` and `limit_period`, a boolean component's bounds (0..1, monthly, no
 * limit amount), the prepaid-only fields, and ranges whose minimum exceeds their maximum. The
 * rules across fields read the component as it will be (`current` for fields not given).
 * `overage_component` is resolved by the caller.
 */
function componentValues(
  body: OfferingComponentWrite,
  errors: FieldErrorSet,
  current: ComponentRow | null,
): Record<string, unknown> {
  const v: Record<string, unknown> = {}
  for (const k of PLAIN) if (body[k] !== undefined) v[k] = body[k]
  if (body.billing_type !== undefined) {
    errors.checkSync(
      'billing_type',
      () => (v.billing_type = choice('billing_type', BILLING_TYPES, body.billing_type)),
    )
  }
  if (body.limit_period !== undefined) {
    errors.checkSync('limit_period', () => {
      v.limit_period =
        body.limit_period === null || body.limit_period === ''
          ? null
          : choice('limit_period', LIMIT_PERIODS, body.limit_period)
    })
  }
  if (body.is_boolean !== undefined) v.is_boolean = fromBool(body.is_boolean)
  if (body.is_prepaid !== undefined) v.is_prepaid = fromBool(body.is_prepaid)
  // A boolean component is on (1) or off (0), counted monthly without a cap (the reference's rule).
  if (body.is_boolean === true)
    Object.assign(v, { min_value: 0, max_value: 1, limit_period: 'month', limit_amount: null })
  const final = (k: keyof ComponentRow): unknown => (k in v ? v[k] : current ? current[k] : undefined)
  const prepaid = toBool(final('is_prepaid'))
  if (!prepaid) {
    for (const k of PREPAID_ONLY) {
      if (body[k] !== undefined && body[k] !== null)
        errors.add(k, 'This field can only be set on prepaid components.')
    }
  }
  const range = (min: keyof ComponentRow, max: keyof ComponentRow, message: string) => {
    const lo = final(min)
    const hi = final(max)
    if (typeof lo === 'number' && typeof hi === 'number' && lo > hi && !errors.hasAny([min, max])) {
      errors.add(min, message)
    }
  }
  range('min_value', 'max_value', 'The minimum value must not exceed the maximum value.')
  range(
    'min_prepaid_duration',
    'max_prepaid_duration',
    'Minimum prepaid duration must not exceed the maximum.',
  )
  range(
    'min_renewal_duration',
    'max_renewal_duration',
    'Minimum renewal duration must not exceed the maximum.',
  )
  if (current && builtinComponents(current.offering_type).some((c) => c.type === current.type)) {
    for (const k of BUILTIN_FIXED) {
      if (v[k] !== undefined && v[k] !== current[k])
        errors.add(k, 'The type, name and unit of a built-in component cannot be changed.')
    }
  }
  return v
}

/**
 * `overage_component`: another component of the same offering, billed by usage and not prepaid,
 * for a component that is prepaid (its usage beyond what was paid for is billed on it).
 */
async function overageValue(
  db: Db,
  offeringId: number,
  body: OfferingComponentWrite,
  values: Record<string, unknown>,
  current: ComponentRow | null,
): Promise<void> {
  const link = body.overage_component
  if (link === undefined) return
  if (link === null) {
    values.overage_component_id = null
    return
  }
  const uuid = normalizeUuid(link)
  const other = uuid ? await componentsRepository(db).findInOffering(offeringId, uuid) : undefined
  if (!other || other.id === current?.id) {
    throw fieldError('overage_component', `Object with uuid=${link} does not exist.`)
  }
  const prepaid = 'is_prepaid' in values ? toBool(values.is_prepaid) : toBool(current?.is_prepaid)
  if (!prepaid) {
    throw fieldError(
      'overage_component',
      "An overage component can only be specified for prepaid components. Please set 'is_prepaid' to true or remove the overage component.",
    )
  }
  if (toBool(other.is_prepaid)) {
    throw fieldError(
      'overage_component',
      'The linked overage component cannot be a prepaid component itself.',
    )
  }
  if (other.billing_type !== 'usage') {
    throw fieldError('overage_component', "The linked overage component must have a billing type of 'usage'.")
  }
  values.overage_component_id = other.id
}

const duplicateType = (type: string) =>
  fieldError('type', `Component with type '${type}' already exists in this offering.`)

/** Inserts a component (and prices it 0 in every plan of the offering); its id back. */
async function insertComponent(
  ctx: AppContext,
  db: Db,
  offeringId: number,
  values: Record<string, unknown>,
): Promise<number> {
  const t = isoNow(ctx.clock)
  const id = await componentsRepository(db).insert({
    uuid: ctx.newUuid(),
    offering_id: offeringId,
    ...values,
    created: t,
    modified: t,
  })
  await planComponentsRepository(db).addToEveryPlan(id, offeringId)
  return id
}

/** The built-in components of the offering's type (see `offering-types.ts`), for a new offering. */
export async function insertBuiltinComponents(
  ctx: AppContext,
  db: Db,
  offeringId: number,
  type: string,
): Promise<void> {
  for (const c of builtinComponents(type)) {
    await insertComponent(ctx, db, offeringId, {
      type: c.type,
      name: c.name,
      measured_unit: c.measured_unit,
      billing_type: c.billing_type,
      limit_period: c.limit_period,
    })
  }
}

// ---- the provider's actions ----

/** The offering of the path, if the actor may see it (404) and update it (403). */
async function writableOffering(ctx: AppContext, actor: Actor, uuid: string): Promise<OfferingRow> {
  const row = await findVisible(offeringsRepository(ctx.db), actor, uuid, 'Offering')
  if (!canUpdateOffering(actor, row)) throw forbidden()
  return row
}

async function componentRecord(ctx: AppContext, id: number): Promise<OfferingComponent> {
  return toComponent((await componentsRepository(ctx.db).findById(id))!)
}

/**
 * `create_offering_component`: a new component of the offering, by whoever may update the
 * offering. Its type is unique in the offering and not one of the type's built-in components.
 */
export async function createOfferingComponent(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: OfferingComponentWrite & { billing_type: string; type: string; name: string },
  errors = new FieldErrorSet(),
): Promise<OfferingComponent> {
  const offering = await writableOffering(ctx, actor, uuid)
  const values = componentValues(body, errors, null)
  await errors.check('overage_component', () => overageValue(ctx.db, offering.id, body, values, null))
  await errors.check('type', async () => {
    if (builtinComponents(offering.type).some((c) => c.type === body.type)) {
      throw fieldError('type', `Cannot create a component of built-in type: ${body.type}`)
    }
    if (await componentsRepository(ctx.db).findByType(offering.id, body.type)) throw duplicateType(body.type)
  })
  errors.throwIfAny()
  let id: number
  try {
    id = await ctx.db.transaction().execute((trx) => insertComponent(ctx, trx, offering.id, values))
  } catch (e) {
    // A concurrent request added the same type first (unique offering and type).
    if (await componentsRepository(ctx.db).findByType(offering.id, body.type)) throw duplicateType(body.type)
    throw e
  }
  return componentRecord(ctx, id)
}

/** The component the body's `uuid` names among the offering's: 404 otherwise. */
async function offeringComponent(ctx: AppContext, offeringId: number, link: unknown): Promise<ComponentRow> {
  const uuid = normalizeUuid(link)
  const row = uuid ? await componentsRepository(ctx.db).findInOffering(offeringId, uuid) : undefined
  if (!row) throw notFound('No OfferingComponent matches the given query.')
  return row
}

/**
 * `update_offering_component`: changes the fields given of the component the body's `uuid` names.
 * A new type must stay unique in the offering; a built-in component keeps its type, name and unit.
 */
export async function updateOfferingComponent(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: OfferingComponentWrite & { uuid: string },
  errors = new FieldErrorSet(),
): Promise<OfferingComponent> {
  const offering = await writableOffering(ctx, actor, uuid)
  const current = await offeringComponent(ctx, offering.id, body.uuid)
  const values = componentValues(body, errors, current)
  await errors.check('overage_component', () => overageValue(ctx.db, offering.id, body, values, current))
  if (body.type !== undefined && body.type !== current.type) {
    await errors.check('type', async () => {
      if (await componentsRepository(ctx.db).findByType(offering.id, body.type!))
        throw duplicateType(body.type!)
    })
  }
  errors.throwIfAny()
  values.modified = isoNow(ctx.clock)
  try {
    await componentsRepository(ctx.db).update(current.id, values)
  } catch (e) {
    if (body.type !== undefined && (await componentsRepository(ctx.db).findByType(offering.id, body.type))) {
      throw duplicateType(body.type)
    }
    throw e
  }
  return componentRecord(ctx, current.id)
}

/**
 * `remove_offering_component`: removes the component the body's `uuid` names, with its prices in
 * the plans. Refused (400) once the offering has resources (their limits, usages and costs name
 * its components), and for a built-in component.
 */
export async function removeOfferingComponent(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: { uuid: string },
): Promise<void> {
  const offering = await writableOffering(ctx, actor, uuid)
  const c = await offeringComponent(ctx, offering.id, body.uuid)
  const repo = componentsRepository(ctx.db)
  if (await repo.offeringHasResources(offering.id)) {
    throw fieldError('uuid', `The component ${c.name} cannot be removed because it is already used`)
  }
  if (builtinComponents(offering.type).some((b) => b.type === c.type)) {
    throw fieldError('uuid', `The component ${c.type} cannot be removed because it is builtin`)
  }
  await repo.delete(c.id)
}

// ---- components given inline when an offering is created ----

type InlineComponent = OfferingComponentWrite & { billing_type: string; type: string; name: string }

/** An inline component's errors, nested as DRF does: `{"components": [{}, {"type": [...]}]}`. */
function nested(index: number, count: number, body: unknown): AppError {
  const list: unknown[] = Array.from({ length: count }, () => ({}))
  list[index] = body
  return new AppError('invalid', { components: list })
}

/**
 * Checks the components given when an offering of `type` is created, before anything is written.
 * For a type with built-in components, only those may be given (each sets the built-in one's
 * fields but its type, name and unit); otherwise each is a new component, its type unique among
 * them.
 */
export function checkInlineComponents(type: string, components: readonly InlineComponent[]): void {
  const builtin = builtinComponents(type)
  if (builtin.length && components.some((c) => !builtin.some((b) => b.type === c.type))) {
    throw fieldError('components', 'Extra components are not allowed.')
  }
  const seen = new Set<string>()
  components.forEach((c, i) => {
    const errors = new FieldErrorSet()
    componentValues(c, errors, null)
    if (c.overage_component !== undefined && c.overage_component !== null) {
      errors.add('overage_component', 'An overage component can be linked once the offering exists.')
    }
    if (seen.has(c.type))
      errors.add('type', `Component with type '${c.type}' already exists in this offering.`)
    seen.add(c.type)
    try {
      errors.throwIfAny()
    } catch (e) {
      if (e instanceof AppError && typeof e.body === 'object') throw nested(i, components.length, e.body)
      throw e
    }
  })
}

/**
 * Writes an offering's inline components (checked by `checkInlineComponents`), after its
 * built-in ones: a built-in type updates that component, any other is inserted.
 */
export async function insertInlineComponents(
  ctx: AppContext,
  db: Db,
  offeringId: number,
  components: readonly InlineComponent[],
): Promise<void> {
  const repo = componentsRepository(db)
  for (const c of components) {
    const values = componentValues(c, new FieldErrorSet(), null)
    const existing = await repo.findByType(offeringId, c.type)
    if (existing) {
      for (const k of BUILTIN_FIXED) delete values[k]
      await repo.update(existing.id, { ...values, modified: isoNow(ctx.clock) })
    } else {
      await insertComponent(ctx, db, offeringId, values)
    }
  }
}

// ---- limits ----

/**
 * The rule every write of a resource's limits follows (order creation, update_limits orders; the
 * provider's set_limits with `reported`, see limitErrors): each key is the type of one of the offering's components that
 * takes limits (billing type `limit`, or `one` paid in advance), and each amount a whole number
 * within the component's `min_value`..`max_value`; with `max_available_limit`, the amounts of the
 * offering's other live resources (all but `resourceId`, which is being changed) plus this one
 * stay within it. Throws 400: `{"limits": ["Invalid types: gpu"]}` or
 * `{"limits": {"cpu": ["The limit 20 value cannot be more than 10."]}}`.
 */
export async function checkLimits(
  ctx: AppContext,
  offeringId: number,
  limits: Readonly<Record<string, unknown>>,
  opts: { resourceId?: number | null; db?: Db; reported?: boolean } = {},
): Promise<void> {
  if (!Object.keys(limits).length) return
  const repo = componentsRepository(opts.db ?? ctx.db)
  const components = (await repo.listByOfferings([offeringId])).map((c) => ({
    type: c.type,
    billing_type: c.billing_type,
    is_prepaid: toBool(c.is_prepaid),
    min_value: c.min_value,
    max_value: c.max_value,
    max_available_limit: c.max_available_limit,
  }))
  const shared = !opts.reported && components.some((c) => c.max_available_limit && c.type in limits)
  const allocated = shared
    ? allocatedLimits(
        (await repo.otherResourcesLimits(offeringId, opts.resourceId ?? null)).map((l) =>
          parseJson<Record<string, unknown>>(l, {}),
        ),
      )
    : new Map<string, number>()
  const errors = limitErrors(components, limits, allocated, { reported: opts.reported })
  if (errors) throw new AppError('invalid', errors)
}
