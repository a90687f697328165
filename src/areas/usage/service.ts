// Reported usage of resources: the provider's reports (set_usage: one usage per resource,
// component and billing period, replaced when reported again in the period; set_user_usages:
// each account's share), and the records the resource's consumer and provider sides read.
//
// Who reports: staff and holders of RESOURCE.SET_USAGE on the resource's offering or on the
// offering's organization (its owners and service provider managers, the offering's managers).
// Who reads: staff and support; project members of the resource's project, holders of a customer
// role in its organization or in the offering's organization, and the offering's managers.
import Big from 'big.js'
import type { AppContext } from '../../context.js'
import { toJson } from '../../db/values.js'
import { AppError, fieldError, forbidden, nonFieldError } from '../../http/errors.js'
import { ownLink, recordRenderer, uuidFromLink } from '../../http/links.js'
import { canAsProvider, resourceSidesVisibility, type Actor } from '../../http/permissions.js'
import { parseDateTime } from '../../http/query.js'
import { normalizeUuid } from '../../http/uuid.js'
import { eachRow, visibleRecords } from '../../http/visible-records.js'
import { scheduleCostPolicyEvaluation } from '../cost-policies/service.js'
import {
  reportRepository,
  userUsagesRepository,
  usagesRepository,
  type UsageRow,
  type UserUsageRow,
} from './repository.js'
import {
  PATHS,
  type ComponentUsage,
  type ComponentUserUsage,
  type MissingUsagePolicy,
  type SetUsage,
  type SetUserUsages,
  type UserUsageItem,
} from './schema.js'

/** Staff and support see every usage; others those of the resources they see from either side. */
export const visibility = resourceSidesVisibility

/** A decimal as stored (numeric text, or a number on SQLite) with two places. */
export const twoPlaces = (v: unknown): string => {
  try {
    return new Big(typeof v === 'number' || typeof v === 'string' ? v : 0).toFixed(2)
  } catch {
    return '0.00'
  }
}

/** Both records' names and uuids of the resource, its offering, project and organization. */
const resourceNames = {
  resource_name: 'copy',
  resource_uuid: 'copy',
  offering_name: 'copy',
  offering_uuid: 'copy',
  project_name: 'copy',
  project_uuid: 'copy',
  customer_name: 'copy',
  customer_uuid: 'copy',
} as const

const toUsage = recordRenderer<UsageRow, ComponentUsage>({
  ...ownLink(PATHS.usages),
  created: 'copy',
  description: 'copy',
  type: 'copy',
  name: 'copy',
  measured_unit: 'copy',
  usage: (r) => twoPlaces(r.usage),
  date: 'copy',
  missing_usage_policy: (r) => r.missing_usage_policy,
  recurring: (r) => r.missing_usage_policy === 'reuse',
  ...resourceNames,
  billing_period: 'copy',
  modified_by: (r) => (r.modified_by_id === null ? null : Number(r.modified_by_id)),
})

const toUserUsage = recordRenderer<UserUsageRow, ComponentUserUsage>({
  ...ownLink(PATHS.userUsages),
  user: { link: PATHS.offeringUsers, from: 'user_uuid' },
  username: 'copy',
  component_usage: { link: PATHS.usages, from: 'component_usage_uuid' },
  usage: (r) => twoPlaces(r.usage),
  measured_unit: 'copy',
  description: 'copy',
  created: 'copy',
  modified: 'copy',
  backend_id: 'copy',
  ...resourceNames,
  component_type: (r) => r.type,
  date: 'copy',
  billing_period: 'copy',
})

const usages = visibleRecords({
  rows: usagesRepository,
  visibility,
  model: 'ComponentUsage',
  render: eachRow(toUsage),
})
export const listUsages = usages.list
export const getUsage = usages.get

const userUsages = visibleRecords({
  rows: userUsagesRepository,
  visibility,
  model: 'ComponentUserUsage',
  render: eachRow(toUserUsage),
})
export const listUserUsages = userUsages.list
export const getUserUsage = userUsages.get

// ---- reports ----

/** The provider side of the resource's offering may report its usage (and staff). */
function mayReport(actor: Actor, r: { offering_id: number; offering_customer_id: number }): boolean {
  return canAsProvider(actor, 'RESOURCE.SET_USAGE', {
    id: r.offering_id,
    customer_id: r.offering_customer_id,
  })
}

/** States a resource takes usage reports in: live, or being changed or torn down. */
const REPORTABLE_STATES = ['OK', 'Erred', 'Updating', 'Terminating']

/** A 400 on one item of a list field: `{"usages": [{}, {"amount": ["..."]}]}`. */
function itemError(field: string, index: number, count: number, name: string, message: string): AppError {
  const list: unknown[] = Array.from({ length: count }, () => ({}))
  list[index] = { [name]: [message] }
  return new AppError('invalid', { [field]: list })
}

/**
 * An amount of a component (a usage, a share, a per-user limit): a decimal of at most 2 places,
 * at least 0, below 10^18; its text with 2 places. `fail` makes the 400 of a refused one.
 */
export function amountOf(v: string | number | undefined, fail: (message: string) => AppError): string {
  let n: Big
  try {
    n = new Big(typeof v === 'number' ? String(v) : (v ?? '').trim())
  } catch {
    throw fail('A valid number is required.')
  }
  if (n.lt(0)) throw fail('Ensure this value is greater than or equal to 0.')
  if (n.round(2).cmp(n) !== 0) throw fail('Ensure that there are no more than 2 decimal places.')
  if (n.gte('1e18')) throw fail('Ensure that there are no more than 20 digits in total.')
  return n.toFixed(2)
}

const DATE_FORMAT =
  'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].'

/** The first day (YYYY-MM-DD) of the month of a UTC instant. */
function monthStartOf(d: Date): string {
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-01`
}

/**
 * The report's time and billing period: `date` as given (its calendar month as written, so a
 * report for November made in a zone ahead of UTC stays in November), else now. A period after
 * the current one (by the server clock, a day's grace for zones ahead of UTC) is refused.
 */
export function reportPeriod(date: string | undefined, now: Date): { date: string; period: string } {
  if (date === undefined) return { date: now.toISOString(), period: monthStartOf(now) }
  const iso = parseDateTime(date)
  if (!iso) throw fieldError('date', DATE_FORMAT)
  const period = `${date.trim().slice(0, 7)}-01`
  if (period > monthStartOf(new Date(now.getTime() + 24 * 3600 * 1000)))
    throw fieldError('date', 'Usage cannot be reported for a future billing period.')
  return { date: iso, period }
}

/** The months (first days, YYYY-MM-DD) of the window a component's limit period counts usage over. */
function limitWindow(limitPeriod: string | null, period: string): { from: string; to: string } | null {
  const [y, m] = period.split('-').map(Number) as [number, number]
  const day = (yy: number, mm: number) => `${String(yy).padStart(4, '0')}-${String(mm).padStart(2, '0')}-01`
  switch (limitPeriod) {
    case 'month':
      return { from: period, to: period }
    case 'quarterly': {
      const first = m - ((m - 1) % 3)
      return { from: day(y, first), to: day(y, first + 2) }
    }
    case 'annual':
      return { from: day(y, 1), to: day(y, 12) }
    case 'total':
      return { from: '0000-01-01', to: '9999-12-01' }
    default:
      return null
  }
}

/**
 * `set_usage`: the provider reports what a resource used of its offering's components (billed by
 * usage or by limit) in the billing period of `date`. Each component's usage of the period is
 * written, or replaced when reported again; the resource's `current_usages` shows its latest
 * period, and the offering's cost policies are evaluated again (the usage is part of their
 * estimate).
 */
export async function setUsage(ctx: AppContext, actor: Actor, body: SetUsage): Promise<void> {
  if (body.resource === undefined || body.resource === '') {
    throw nonFieldError('Either plan_period or resource should be provided.')
  }
  const uuid = normalizeUuid(body.resource)
  if (!uuid) throw fieldError('resource', 'Must be a valid UUID.')
  const report = reportRepository(ctx.db)
  const resource = await report.resourceByUuid(uuid)
  if (!resource) throw fieldError('resource', `Object with uuid=${uuid} does not exist.`)
  if (!mayReport(actor, resource)) throw forbidden()
  if (!REPORTABLE_STATES.includes(resource.state)) {
    throw fieldError('resource', 'Resource is not in valid state.')
  }
  const now = ctx.clock()
  const { date, period } = reportPeriod(body.date, now)
  const components = new Map(
    (await report.reportableComponents(resource.offering_id)).map((c) => [c.type, c]),
  )
  const invalid = [...new Set(body.usages.map((u) => u.type).filter((t) => !components.has(t)))].sort()
  if (invalid.length) throw fieldError('usages', `These components are invalid: ${invalid.join(', ')}.`)
  const count = body.usages.length
  const items = body.usages.map((u, i) => {
    const amount = amountOf(u.amount, (m) => itemError('usages', i, count, 'amount', m))
    const policy: MissingUsagePolicy = u.missing_usage_policy ?? (u.recurring === true ? 'reuse' : 'none')
    return { component: components.get(u.type)!, amount, description: u.description ?? '', policy }
  })
  // The last report of a component in one request wins, as reports replace each other.
  const last = [...new Map(items.map((it) => [it.component.id, it])).values()]
  // A usage component with a limit per period: the window its reports are summed over.
  const capped = last.flatMap(({ component: c, amount }) => {
    const window =
      c.billing_type === 'usage' && c.limit_amount !== null ? limitWindow(c.limit_period, period) : null
    return window ? [{ componentId: c.id, limit: c.limit_amount!, amount, ...window }] : []
  })
  const nowIso = now.toISOString()
  await ctx.db.transaction().execute(async (trx) => {
    const repo = usagesRepository(trx)
    const sums = await repo.sumsOfPeriods(resource.id, capped, period)
    for (const cap of capped) {
      const total = new Big(twoPlaces(sums.get(cap.componentId) ?? 0)).plus(cap.amount)
      if (total.gt(cap.limit)) {
        throw fieldError(
          'usages',
          `Total amount exceeds limit. Total amount: ${total.toFixed(2)}, limit: ${cap.limit}.`,
        )
      }
    }
    await repo.upsert(
      last.map((it) => ({
        uuid: ctx.newUuid(),
        resource_id: resource.id,
        component_id: it.component.id,
        billing_period: period,
        usage: it.amount,
        date,
        description: it.description,
        missing_usage_policy: it.policy,
        modified_by_id: actor.id,
      })),
      nowIso,
    )
    const current = await repo.latestPeriod(resource.id)
    await reportRepository(trx).setCurrentUsages(
      resource.id,
      toJson(Object.fromEntries(current.map((c) => [c.type, twoPlaces(c.usage)]))),
      nowIso,
    )
    await scheduleCostPolicyEvaluation(ctx, trx, resource.offering_id)
  })
}

/**
 * The usage a path names, visible to the caller, that the caller may report on (403 otherwise):
 * its row carries its resource's offering and the offering's organization.
 */
async function reportableUsage(ctx: AppContext, actor: Actor, uuid: string): Promise<UsageRow> {
  const row = await usages.find(ctx, actor, uuid)
  if (!mayReport(actor, row)) throw forbidden()
  return row
}

/**
 * Each account's usage under a component usage (`set_user_usages`; `set_user_usage` is one):
 * written, or replaced for its username. `user`, when given, must be an account of the resource's
 * offering; without it, the offering's account of that username (if any) is linked.
 */
export async function setUserUsages(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: SetUserUsages,
  one = false,
): Promise<void> {
  const row = await reportableUsage(ctx, actor, uuid)
  const count = body.usages.length
  const fail = (i: number, name: string, message: string) =>
    one ? fieldError(name, message) : itemError('usages', i, count, name, message)
  // The accounts the items name, read at once: by link where one is given, else by username.
  const links = body.usages.map((u) => (linkGiven(u) ? uuidFromLink(u.user, PATHS.offeringUsers) : null))
  const { byUsername, byUuid } = await reportRepository(ctx.db).accountsNamed(
    row.offering_id,
    body.usages.filter((u) => !linkGiven(u)).map((u) => u.username),
    links.filter((l): l is string => !!l),
  )
  const linked = (i: number): number => {
    const link = links[i]
    if (!link) throw fail(i, 'user', 'Invalid hyperlink - Incorrect URL match.')
    const account = byUuid.get(link)
    if (!account) throw fail(i, 'user', 'Invalid hyperlink - Object does not exist.')
    if (account.offering_id !== row.offering_id)
      throw fail(i, 'user', "The offering user is not an account of the resource's offering.")
    return account.id
  }
  // The last share of a username in one request wins, as shares replace each other.
  const shares = new Map<string, { usage: string; account: number | null }>()
  for (const [i, u] of body.usages.entries()) {
    const usage = u.usage === undefined ? '0.00' : amountOf(u.usage, (m) => fail(i, 'usage', m))
    shares.set(u.username, {
      usage,
      account: linkGiven(u) ? linked(i) : (byUsername.get(u.username) ?? null),
    })
  }
  await userUsagesRepository(ctx.db).upsert(
    [...shares].map(([username, it]) => ({
      uuid: ctx.newUuid(),
      component_usage_id: row.id,
      username,
      offering_user_id: it.account,
      usage: it.usage,
    })),
    ctx.clock().toISOString(),
  )
}

/** The item names its account by a link (an empty one names none). */
function linkGiven(u: UserUsageItem): u is UserUsageItem & { user: string } {
  return u.user !== undefined && u.user !== null && u.user !== ''
}
