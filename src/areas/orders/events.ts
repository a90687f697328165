// What the orders tell: each change of an order as an event, in the transaction of the change.
import type { AppContext } from '../../context.js'
import { emitEvent } from '../events/service.js'
import { ordersRepository } from './repository.js'
import type { Trx } from './order-rules.js'
import { PATH } from './schema.js'

/**
 * Tells a change of the order `orderId` (`marketplace.order.<change>`) with its facts: the order,
 * its resource and the offering, project and organization it belongs to.
 */
export async function tellOrderChange(
  ctx: AppContext,
  trx: Trx,
  orderId: number,
  change: string,
  data: Record<string, unknown>,
): Promise<void> {
  const o = await ordersRepository(trx).eventRow(orderId)
  if (!o) return
  await emitEvent(ctx, trx, {
    type: `marketplace.order.${change}`,
    objectType: 'order',
    objectUuid: o.uuid,
    path: `/api/${PATH}/${o.uuid}/`,
    offeringUuid: o.offering_uuid,
    projectUuid: o.project_uuid,
    customerUuid: o.customer_uuid,
    data: { order_type: o.type, state: o.state, resource_uuid: o.resource_uuid, ...data },
  })
}
