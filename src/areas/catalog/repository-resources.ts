// SQL of the read side of marketplace resources: the rows a caller may see (its projects, its
// customers' projects, its providers' and offerings' resources) and the `query` search.
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import { tableRecords } from '../../db/rows.js'
import { icontains } from '../../db/sql.js'
import { normalizeUuid } from '../../http/uuid.js'
import { joined, projectAndCustomer, unlessAll } from '../../db/joins.js'
import { CATEGORY_OF_OFFERING, OFFERING_OF_RESOURCE, PROVIDER_OF_OFFERING } from '../../db/relations.js'
import { type CatalogVisibility, type Db } from './repository.js'
import { none } from '../../db/sql.js'

/** `query`: the name contains the text, or the text is the resource's uuid. */
export function resourceQueryMatches(eb: ExpressionBuilder<any, any>, text: string): Expression<SqlBool> {
  const uuid = normalizeUuid(text.trim())
  return uuid
    ? eb.or([icontains('resources.name', text), eb('resources.uuid', '=', uuid)])
    : icontains('resources.name', text)
}

export function resourcesRepository(db: Db) {
  const base = () =>
    joined(db, 'resources', [
      OFFERING_OF_RESOURCE,
      PROVIDER_OF_OFFERING,
      ...projectAndCustomer('resources'),
      ['left', 'plans', 'resources.plan_id'],
      CATEGORY_OF_OFFERING,
    ])
  const visible = unlessAll(base, (q, vis: Extract<CatalogVisibility, { all: false }>) =>
    q.where((eb) =>
      eb.or([
        eb('resources.project_id', 'in', none(vis.projectIds)),
        eb('projects.customer_id', 'in', none(vis.customerIds)),
        eb('offerings.customer_id', 'in', none(vis.customerIds)),
        eb('resources.offering_id', 'in', none(vis.offeringIds)),
      ]),
    ),
  )
  const columns = [
    'resources.id',
    'resources.uuid',
    'resources.name',
    'resources.state',
    'resources.attributes',
    'resources.limits',
    'resources.backend_id',
    'resources.resource_type',
    'resources.scope_type',
    'resources.scope_id',
    'resources.end_date',
    'resources.created',
    'resources.modified',
    'offerings.uuid as offering_uuid',
    'offerings.name as offering_name',
    'offerings.type as offering_type',
    'plans.uuid as plan_uuid',
    'plans.name as plan_name',
    'projects.uuid as project_uuid',
    'projects.name as project_name',
    'customers.uuid as customer_uuid',
    'customers.name as customer_name',
    'provider.uuid as provider_uuid',
    'provider.name as provider_name',
    'categories.uuid as category_uuid',
    'categories.title as category_title',
  ] as const
  return tableRecords(db, { table: 'resources', base, visible, select: (q) => q.select(columns) })
}
