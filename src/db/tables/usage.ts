// Tables of reported usage: a resource's usage of an offering component per billing period, and
// the accounts' shares of it.
import type { Generated } from 'kysely'

export interface ComponentUsagesTable {
  id: Generated<number>
  uuid: string
  resource_id: number
  component_id: number
  /** YYYY-MM-DD, the first day of the month the usage was reported for */
  billing_period: string
  /** decimal (2 places) */
  usage: Generated<number | string>
  date: string
  description: Generated<string>
  /** none | reuse | zero */
  missing_usage_policy: Generated<string>
  modified_by_id: number | null
  created: string
  modified: string
}

export interface ComponentUserUsagesTable {
  id: Generated<number>
  uuid: string
  component_usage_id: number
  username: string
  offering_user_id: number | null
  usage: Generated<number | string>
  description: Generated<string>
  backend_id: Generated<string>
  created: string
  modified: string
}

export interface UsageTables {
  component_usages: ComponentUsagesTable
  component_user_usages: ComponentUserUsagesTable
}
