// Row types of the tables of orders.
import type { Generated } from 'kysely'
import type { Bool, Json } from './values.js'

export interface OrdersTable {
  id: Generated<number>
  uuid: string
  slug: Generated<string>
  type: string
  state: string
  offering_id: number
  provider_customer_id: number
  plan_id: number | null
  old_plan_id: number | null
  project_id: number
  customer_id: number
  resource_id: number | null
  attributes: Json
  limits: Json
  cost: number | string | null
  callback_url: string | null
  request_comment: string | null
  start_date: string | null
  output: Generated<string>
  error_message: Generated<string>
  error_traceback: Generated<string>
  backend_id: Generated<string>
  attachment: string | null
  termination_comment: string | null
  consumer_reviewed_by_id: number | null
  consumer_reviewed_at: string | null
  provider_reviewed_by_id: number | null
  provider_reviewed_at: string | null
  created_by_id: number | null
  completed_at: string | null
  consumer_rejection_comment: Generated<string>
  provider_rejection_comment: Generated<string>
  /** 1 when consumer review was skipped by a rule at creation. */
  auto_approved: Generated<Bool>
  output_updated_at: Generated<string | null>
  error_updated_at: Generated<string | null>
  created: string
  modified: string
  /** Raised by a trigger on every update of the row (see record-cache.ts). */
  version: Generated<number>
}

/** Raised by triggers when rows that records of `name` show change (see record-cache.ts). */
export interface RecordEpochsTable {
  name: string
  n: number
}

/** Orders per project and state, kept by triggers. */
export interface OrderCountsTable {
  project_id: number
  state: string
  n: number
}

export interface OrderTables {
  orders: OrdersTable
  record_epochs: RecordEpochsTable
  order_counts: OrderCountsTable
}
