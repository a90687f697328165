// SQL of offerings (with their organization groups) and their plans, scoped by what the caller
// may see of the catalog.
import type { SelectQueryBuilder } from 'kysely'
import { insertReturningId, perDatabase, reusableByForm, slot } from '../../db/compiled.js'
import { countRows, scopedList } from '../../db/listing.js'
import { firstWhere, organizationGroupLinks, tableRecords, updateRow } from '../../db/rows.js'
import { joined } from '../../db/joins.js'
import { CATEGORY_OF_OFFERING, PROVIDER_OF_OFFERING } from '../../db/relations.js'
import { offeringVisible, slottedCatalogVisibility, type CatalogVisibility, type Db } from './repository.js'
import { partByUuid, type ReadPart } from '../../db/read-parts.js'

const offeringByUuid = reusableByForm()
const planByUuid = reusableByForm(1)

/** The offering and plan columns a read made of several answers (a new order's checks). */
export const OFFERING_LINK_COLUMNS = [
  'offerings.id',
  'offerings.uuid',
  'offerings.name',
  'offerings.customer_id',
  'offerings.type',
  'offerings.state',
  'offerings.shared',
  'offerings.plugin_options',
  'offerings.terms_of_service',
] as const
export const PLAN_LINK_COLUMNS = [
  'plans.id',
  'plans.uuid',
  'plans.offering_id',
  'plans.archived',
  'plans.max_amount',
  'plans.unit_price',
  'plans.fixed_price',
] as const

/** The rows of `base` (which joins `offerings`) that a caller may see: those of offerings it may see. */
function visibleWithOffering<Q extends SelectQueryBuilder<any, any, any>>(base: () => Q) {
  return (vis: CatalogVisibility): Q => base().where((eb) => offeringVisible(eb, vis)) as Q
}

/** Built once per database handle (`perDatabase`): order creation resolves its offering and plan here. */
export const offeringsRepository = perDatabase((db: Db) => {
  const base = () =>
    joined(db, 'offerings', [
      PROVIDER_OF_OFFERING,
      CATEGORY_OF_OFFERING,
      ['left', 'service_settings', 'offerings.service_settings_id'],
      ['left', 'projects as offering_project', 'offerings.project_id'],
      ['left', 'offerings as parent', 'offerings.parent_id'],
    ])
  const visible = visibleWithOffering(base)
  const columns = [
    'offerings.id',
    'offerings.uuid',
    'offerings.name',
    'offerings.description',
    'offerings.slug',
    'offerings.category_id',
    'offerings.customer_id',
    'offerings.parent_id',
    'offerings.type',
    'offerings.state',
    'offerings.shared',
    'offerings.billable',
    'offerings.plugin_options',
    'offerings.terms_of_service',
    'offerings.image',
    'offerings.thumbnail',
    'offerings.service_settings_id',
    'offerings.project_id',
    'offerings.backend_id',
    'offerings.created',
    'offerings.modified',
    'provider.uuid as customer_uuid',
    'provider.name as customer_name',
    'categories.uuid as category_uuid',
    'categories.title as category_title',
    'service_settings.uuid as scope_uuid',
    'offering_project.uuid as project_uuid',
    'offering_project.customer_id as project_customer_id',
    'parent.uuid as parent_uuid',
  ] as const
  const { count, list } = scopedList(visible, (q) => q.select(columns), 'offerings.id')
  const groups = organizationGroupLinks(db, 'offering_organization_groups', 'offering_id', 'name')
  return {
    count,
    list,
    /** Compiled once per form of the caller's scopes: order creation resolves an offering each time. */
    async findVisibleByUuid(vis: CatalogVisibility, uuid: string) {
      const { slotted, values, form } = slottedCatalogVisibility(vis)
      const build = () => visible(slotted).select(columns).where('offerings.uuid', '=', slot(values.length))
      return (await offeringByUuid(db, form, build, [...values, uuid])).rows[0]
    },
    /**
     * `findVisibleByUuid` as part `offering` of a read made of several (see `ReadPart`), with the
     * columns a new order reads (`OFFERING_LINK_COLUMNS`; none of the joined tables').
     */
    visiblePart(vis: CatalogVisibility, uuid: string | null, from: number): ReadPart {
      const { slotted, ...scope } = slottedCatalogVisibility(vis, from)
      return partByUuid('offering', 'offerings', OFFERING_LINK_COLUMNS, scope, uuid, from, () =>
        db.selectFrom('offerings').where((eb) => offeringVisible(eb, slotted)),
      )
    },
    findByUuid: (uuid: string) => firstWhere(base().select(columns), 'offerings.uuid', uuid),
    findById: (id: number) => firstWhere(base().select(columns), 'offerings.id', id),
    /** The uuids of each offering's organization groups, by name; `setGroups` replaces one's. */
    groupUuids: groups.uuidsOf,
    setGroups: groups.set,
    insert: (values: Record<string, unknown>) => insertReturningId(db, 'offerings', values),
    update: (id: number, values: Record<string, unknown>) => updateRow(db, 'offerings', id, values),
    /** The conditional write of a state transition: true when this call won. */
    async updateStateIfCurrent(id: number, from: readonly string[], to: string, modified: string) {
      const r = await db
        .updateTable('offerings')
        .set({ state: to, modified })
        .where('id', '=', id)
        .where('state', 'in', [...from])
        .executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },
    /** Deletes only while the offering is in one of `states`: true when deleted. */
    async deleteIfState(id: number, states: readonly string[]): Promise<boolean> {
      const r = await db
        .deleteFrom('offerings')
        .where('id', '=', id)
        .where('state', 'in', [...states])
        .executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    },
    countByCustomer(customerId: number, exceptStates: string[]): Promise<number> {
      return countRows(
        db
          .selectFrom('offerings')
          .where('customer_id', '=', customerId)
          .where('state', 'not in', exceptStates),
      )
    },
    resourceCount(offeringId: number): Promise<number> {
      return countRows(db.selectFrom('resources').where('offering_id', '=', offeringId))
    },
    findServiceSettingsByUuid(uuid: string) {
      return db
        .selectFrom('service_settings')
        .select(['id', 'uuid', 'type', 'shared', 'customer_id'])
        .where('uuid', '=', uuid)
        .executeTakeFirst()
    },
  }
})

export const plansRepository = perDatabase((db: Db) => {
  function base() {
    return db.selectFrom('plans').innerJoin('offerings', 'offerings.id', 'plans.offering_id')
  }
  const visible = visibleWithOffering(base)
  const columns = [
    'plans.id',
    'plans.uuid',
    'plans.offering_id',
    'plans.name',
    'plans.description',
    'plans.unit',
    'plans.unit_price',
    'plans.fixed_price',
    'plans.activation_price',
    'plans.archived',
    'plans.article_code',
    'plans.max_amount',
    'plans.backend_id',
    'plans.created',
    'offerings.uuid as offering_uuid',
    'offerings.name as offering_name',
    'offerings.customer_id as offering_customer_id',
  ] as const
  return {
    ...tableRecords(db, { table: 'plans', base, visible, select: (q) => q.select(columns) }),
    async findByUuid(uuid: string) {
      const build = () => base().select(columns).where('plans.uuid', '=', slot(0))
      return (await planByUuid(db, '', build, [uuid])).rows[0]
    },
    /**
     * `findByUuid` as part `plan` of a read made of several (see `ReadPart`), with the columns a
     * new order reads (`PLAN_LINK_COLUMNS`).
     */
    part(uuid: string | null, from: number): ReadPart {
      const everyone = { values: [], form: '' }
      return partByUuid('plan', 'plans', PLAN_LINK_COLUMNS, everyone, uuid, from, () =>
        db.selectFrom('plans'),
      )
    },
    listByOfferings(offeringIds: number[]) {
      if (!offeringIds.length) return Promise.resolve([])
      return base()
        .select(columns)
        .where('plans.offering_id', 'in', offeringIds)
        .orderBy('plans.created')
        .orderBy('plans.id')
        .execute()
    },
    insert: (values: Record<string, unknown>) => insertReturningId(db, 'plans', values),
    resourceCount(planId: number): Promise<number> {
      return countRows(db.selectFrom('resources').where('plan_id', '=', planId))
    },
  }
})
