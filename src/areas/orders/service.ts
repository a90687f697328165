// Order use cases, one file per responsibility: the records (records.ts), placing an order
// (create.ts, resource-actions.ts), the transitions (transitions.ts, state-changes.ts), the
// attachment (attachments.ts) and the jobs (jobs.ts). This file is what the routes and other
// areas call.
import type { AppContext } from '../../context.js'
import type { Actor } from '../../http/permissions.js'
import { offeringRecord } from '../catalog/service.js'
import { findVisible } from './order-rules.js'

export { orderVisibility, findVisible as findVisibleOrder } from './order-rules.js'
export { CALLBACK_LANE, JOBS } from './state-changes.js'
export { getOrder, listOrders, orderRecord, orderRecordCounters } from './records.js'
export { createOrder } from './create.js'
export { switchPlan, terminateResource, updateLimits } from './resource-actions.js'
export {
  approveByConsumer,
  approveByProvider,
  cancelOrder,
  deleteOrder,
  rejectByConsumer,
  rejectByProvider,
  setBackendId,
  setStateDone,
  setStateErred,
  setStateExecuting,
  unlinkOrder,
} from './transitions.js'
export { deleteAttachment, openAttachment, updateAttachment } from './attachments.js'
export { completeOrder, defineOrderJobs } from './jobs.js'

export async function getOrderOffering(ctx: AppContext, actor: Actor, uuid: string, base: string) {
  const row = await findVisible(ctx, actor, uuid)
  return offeringRecord(ctx, base, row.offering_id)
}
