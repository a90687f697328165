// HTTP for reported usage: component usages (/api/marketplace-component-usages/, with the
// provider's set_usage, set_user_usage and set_user_usages) and the accounts' shares of them
// (/api/marketplace-component-user-usages/).
import { Type } from '@sinclair/typebox'
import { filter } from '../../http/filters.js'
import { fieldError } from '../../http/errors.js'
import { defineAction, defineResource, orderedBy, resourceRoutes } from '../../http/resource.js'
import { single, type Query } from '../../http/query.js'
import * as svc from './service.js'
import * as s from './schema.js'
import { periodPart } from './repository.js'

const U = 'component_usages'
const UU = 'component_user_usages'

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/

/** A date YYYY-MM-DD (a real day); anything else → 400 "Enter a valid date.". */
function dateFilter(q: Query, name: string): string | undefined {
  const v = single(q, name)
  if (v === undefined) return undefined
  const m = DATE_RE.exec(v.trim())
  const d = m ? new Date(`${m[0]}T00:00:00.000Z`) : null
  if (!m || !d || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== m[0] || m[1] === '0000')
    throw fieldError(name, 'Enter a valid date.')
  return m[0]
}

const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString()

const DateParam = (description: string) => Type.String({ format: 'date', description })

/** `date_before` / `date_after`: the usage's `date` on or before / on or after a day (UTC). */
const dayFilters = (column: string) => ({
  date_before: filter.custom(DateParam('reported on or before this day'), dateFilter, (eb, v: string) =>
    eb(column, '<', nextDay(v)),
  ),
  date_after: filter.custom(DateParam('reported on or after this day'), dateFilter, (eb, v: string) =>
    eb(column, '>=', `${v}T00:00:00.000Z`),
  ),
})

/** The filters both lists share: by the resource, its offering, project and organization. */
const resourceFilters = {
  resource: filter.link(s.PATHS.resources, 'resources.uuid'),
  resource_uuid: filter.uuid('resources.uuid'),
  offering_uuid: filter.uuid('offerings.uuid'),
  project_uuid: filter.uuid('projects.uuid'),
  customer_uuid: filter.uuid('customers.uuid'),
  billing_period_year: filter.integer(periodPart('year'), { description: "the billing period's year" }),
  billing_period_month: filter.integer(periodPart('month'), { description: "the billing period's month" }),
  ...dayFilters(`${U}.date`),
  type: filter.exact('component.type', { description: "the component's type" }),
}

export const componentUsages = defineResource({
  path: s.PATHS.usages,
  noun: 'component usage',
  record: s.ComponentUsageSchema,
  visibility: svc.visibility,
  list: {
    filters: {
      ...resourceFilters,
      billing_period: filter.custom(
        DateParam('the first day of the billing month'),
        dateFilter,
        `${U}.billing_period`,
      ),
      missing_usage_policy: filter.choice(s.MISSING_USAGE_POLICIES, `${U}.missing_usage_policy`),
    },
    ordering: {
      ...orderedBy({
        billing_period: `${U}.billing_period`,
        usage: `${U}.usage`,
        missing_usage_policy: `${U}.missing_usage_policy`,
        date: `${U}.date`,
        type: 'component.type',
      }),
      default: [
        { column: `${U}.date`, desc: true },
        { column: 'component.type', desc: false },
      ],
    },
    run: (c) => svc.listUsages(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => svc.getUsage(c.ctx, c.actor, c.uuid, c.base) },
  actions: [
    defineAction({
      name: 'set_usage',
      detail: false,
      summary: "Report a resource's usage of its offering's components in a billing period",
      body: s.SetUsageBody,
      status: 201,
      response: null,
      run: (c) => svc.setUsage(c.ctx, c.actor, c.body),
    }),
    defineAction({
      name: 'set_user_usage',
      summary: "Report one account's usage under the component usage",
      body: s.UserUsageItemBody,
      status: 201,
      response: null,
      run: (c) => svc.setUserUsages(c.ctx, c.actor, c.uuid, { usages: [c.body] }, true),
    }),
    defineAction({
      name: 'set_user_usages',
      summary: "Report the accounts' usages under the component usage",
      body: s.SetUserUsagesBody,
      status: 201,
      response: null,
      run: (c) => svc.setUserUsages(c.ctx, c.actor, c.uuid, c.body),
    }),
  ],
})

export const componentUserUsages = defineResource({
  path: s.PATHS.userUsages,
  noun: 'component user usage',
  record: s.ComponentUserUsageSchema,
  visibility: svc.visibility,
  list: {
    filters: {
      ...resourceFilters,
      component_usage__billing_period: filter.custom(
        DateParam("the first day of the component usage's billing month"),
        dateFilter,
        `${U}.billing_period`,
      ),
      username: filter.exact(`${UU}.username`),
      user_uuid: filter.uuid('account_user.uuid', { description: "the uuid of the account's user" }),
    },
    ordering: {
      ...orderedBy({
        component_usage__billing_period: `${U}.billing_period`,
        usage: `${UU}.usage`,
        username: `${UU}.username`,
      }),
      default: [
        { column: `${U}.date`, desc: true },
        { column: 'component.type', desc: false },
      ],
    },
    run: (c) => svc.listUserUsages(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => svc.getUserUsage(c.ctx, c.actor, c.uuid, c.base) },
})

export const usageRoutes = resourceRoutes([componentUsages, componentUserUsages])
