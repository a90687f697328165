// The services' list: the agents poll it, so its count and page queries are compiled once per
// form of filters and reused, and the count of stale services is kept between requests.
import { anyOf, applyConditions, formOf, reusableByForm, slot, type Condition } from '../../db/compiled.js'
import { EpochCache } from '../../db/epochs.js'
import { serviceColumns, services, type AgentScope, type Db, type ServiceRow } from './repository.js'

const MODIFIED = 'site_agent_services.modified'

export interface ServiceFilters {
  identity_uuid?: string
  mode?: string
  modified_after?: string
  modified_before?: string
  stale?: boolean
  states?: number[]
}

const serviceCountOf = reusableByForm()
const servicePageOf = reusableByForm()

/** `site_agent_services.modified <op> value`, a condition of the form `form`. */
function modifiedIs(form: string, op: '<' | '>' | '>=', value: string): Condition<any> {
  return { form, values: [value], apply: (q, [s]) => q.where(MODIFIED, op, s) }
}

/** The number of services meeting these conditions: `plain` ones read the service alone. */
async function countServices(db: Db, plain: boolean, counted: Condition<any>[]): Promise<number> {
  const { form, values } = formOf(counted)
  const build = () =>
    applyConditions<any>(plain ? db.selectFrom('site_agent_services') : services(db), counted).select(
      (eb: any) => eb.fn.countAll().as('n'),
    )
  const key = `${plain ? 'services' : 'joined'}/${form}`
  return Number((await serviceCountOf<{ n: number | string }>(db, key, build, values)).rows[0]!.n)
}

/** A total of stale services, and the time services had to be modified before to count in it. */
interface StaleTotal {
  before: string
  n: number
}

const staleTotals = new EpochCache<StaleTotal>(['site_agent_services'], 64)

/**
 * The number of services (of those meeting `own`, the service's own filters) modified before
 * `before`. While no service has been written since the last total, the services that went stale
 * since it are counted and added to it, a few index entries instead of every stale service.
 */
async function staleTotal(db: Db, own: Condition<any>[], before: string): Promise<number> {
  const range = (from: string | null): Condition<any>[] => [
    ...own,
    ...(from === null ? [] : [modifiedIs('stale-from', '>=', from)]),
    modifiedIs('stale', '<', before),
  ]
  const { form, values } = formOf(own)
  const { kept, keep } = await staleTotals.open(db, `${form}/${JSON.stringify(values)}`)
  const n =
    kept && kept.before <= before
      ? kept.n + (await countServices(db, true, range(kept.before)))
      : await countServices(db, true, range(null))
  keep({ before, n })
  return n
}

/**
 * The services a scope sees that meet the filters (`staleBefore`: services modified before it are
 * stale): their count, and a page of them oldest first.
 */
export function serviceList(db: Db, scope: AgentScope, f: ServiceFilters, staleBefore: string) {
  // The filters on the service's own columns, then those that need its identity and offering.
  const own: Condition<any>[] = []
  if (f.mode !== undefined) {
    own.push({
      form: 'mode',
      values: [f.mode],
      apply: (q, [s]) => q.where('site_agent_services.mode', '=', s),
    })
  }
  if (f.modified_after) own.push(modifiedIs('modified-after', '>', f.modified_after))
  if (f.modified_before) own.push(modifiedIs('modified-before', '<', f.modified_before))
  if (f.stale === false) own.push(modifiedIs('fresh', '>=', staleBefore))
  if (f.states?.length) {
    own.push({
      form: `states:${f.states.length}`,
      values: f.states,
      apply: (q, s) => q.where('site_agent_services.state', 'in', s),
    })
  }
  // The service's own filters but the stale rule (see staleTotal).
  const notStale = [...own]
  if (f.stale === true) own.push(modifiedIs('stale', '<', staleBefore))
  const joined: Condition<any>[] = [...own]
  if (f.identity_uuid) {
    joined.unshift({
      form: 'identity',
      values: [f.identity_uuid],
      apply: (q, [s]) => q.where('site_agent_identities.uuid', '=', s),
    })
  }
  if (scope) joined.unshift(anyOf('visible', scope))
  // Whoever sees every service counts them without the joins (the filters are the service's own).
  const plain = !scope && !f.identity_uuid
  return {
    count(): Promise<number> {
      if (plain && f.stale === true) return staleTotal(db, notStale, staleBefore)
      return countServices(db, plain, plain ? own : joined)
    },
    async rows(limit: number, offset: number): Promise<ServiceRow[]> {
      const { form, values } = formOf(joined)
      const build = () =>
        applyConditions<any>(services(db), joined)
          .select(serviceColumns)
          .orderBy('site_agent_services.created')
          .orderBy('site_agent_services.id')
          .limit(slot<number>(values.length))
          .offset(slot<number>(values.length + 1))
      return (await servicePageOf<ServiceRow>(db, form, build, [...values, limit, offset])).rows
    },
  }
}
