// The contract between orders and the areas that provision resources for server-processed
// offering types (e.g. CloudB.Tenant). The orders area runs a processor inside a job once an
// order reaches `executing`; the processor does the backend work and says how it ended.
import type { Transaction } from 'kysely'
import type { AppContext } from '../../context.js'
import type { DB } from '../../db/tables.js'

export type OrderType = 'Create' | 'Update' | 'Terminate'

export interface ProcessedOrder {
  orderId: number
  orderUuid: string
  type: OrderType
  offering: {
    id: number
    uuid: string
    type: string
    customerId: number
    serviceSettingsId: number | null
    pluginOptions: Record<string, unknown>
  }
  resource: {
    id: number
    uuid: string
    name: string
    projectId: number
    customerId: number
    planId: number | null
    scopeType: string | null
    scopeId: number | null
    backendId: string
  }
  attributes: Record<string, unknown>
  limits: Record<string, number>
  createdById: number | null
}

/**
 * `done`: the order is done now. `pending`: the backend work continues in the processor's own
 * jobs, which later call the orders service's completion functions (done or erred).
 * A thrown error makes the order erred with its message.
 */
export type ProcessResult = { state: 'done' } | { state: 'pending' }

export interface OfferingProcessor {
  process(ctx: AppContext, trx: Transaction<DB>, order: ProcessedOrder): Promise<ProcessResult>
}

const processors = new Map<string, OfferingProcessor>()

/** Registers the processor of an offering type (called once, when the owning area registers). */
export function registerOfferingProcessor(offeringType: string, processor: OfferingProcessor): void {
  processors.set(offeringType, processor)
}

export function offeringProcessor(offeringType: string): OfferingProcessor | undefined {
  return processors.get(offeringType)
}
