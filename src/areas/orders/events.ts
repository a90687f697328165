// What the orders tell: each change of an order as an event, in the transaction of the change.
import type { AppContext } from '../../context.js'
import { emitEvent, type EventInput } from '../events/service.js'
import { ordersRepository } from './repository.js'
import type { Trx } from './order-rules.js'
import { PATH } from './schema.js'

/** What an order's events tell of it: its type and state, and the uuids of it and its scopes. */
export interface OrderEventFacts {
  uuid: string
  type: string
  state: string
  offering_uuid: string
  project_uuid: string
  customer_uuid: string
  resource_uuid: string | null
}

/**
 * A change of the order (`marketplace.order.<change>`) with its facts: the order, its resource
 * and the offering, project and organization it belongs to.
 */
export function orderEvent(o: OrderEventFacts, change: string, data: Record<string, unknown>): EventInput {
  return {
    type: `marketplace.order.${change}`,
    objectType: 'order',
    objectUuid: o.uuid,
    path: `/api/${PATH}/${o.uuid}/`,
    offeringUuid: o.offering_uuid,
    projectUuid: o.project_uuid,
    customerUuid: o.customer_uuid,
    data: { order_type: o.type, state: o.state, resource_uuid: o.resource_uuid, ...data },
  }
}

/** Tells a change of the order `orderId`, its facts read here. */
export async function tellOrderChange(
  ctx: AppContext,
  trx: Trx,
  orderId: number,
  change: string,
  data: Record<string, unknown>,
): Promise<void> {
  const o = await ordersRepository(trx).eventRow(orderId)
  if (o) await emitEvent(ctx, trx, orderEvent(o, change, data))
}
