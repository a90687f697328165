// Orders of CloudB.Tenant offerings: Create makes a tenant through the driver (the marketplace
// resource's scope becomes the tenant), Update pushes new limits, Terminate deletes the tenant.
// Each answers `pending`; the tenant's lifecycle step completes the order when it settles.
import type { AppContext } from '../../context.js'
import { toJson } from '../../db/values.js'
import { insertResource } from '../cloud/common.js'
import { moveCloudResource } from '../cloud/states.js'
import { enqueueStep } from '../cloud/lifecycle.js'
import { completeOrder } from '../orders/service.js'
import type { OfferingProcessor } from '../orders/processors.js'
import { cloudBRepository } from './repository.js'
import { TYPES } from './schema.js'
import { onTenantSettled } from './service.js'

export const tenantProcessor: OfferingProcessor = {
  async process(ctx, trx, order) {
    const repo = cloudBRepository(trx)
    switch (order.type) {
      case 'Create': {
        const settingsId = order.offering.serviceSettingsId
        if (settingsId == null) throw new Error('The offering has no cloudB service settings.')
        const name =
          order.resource.name ||
          (typeof order.attributes.name === 'string' ? order.attributes.name : '') ||
          'tenant'
        const description =
          typeof order.attributes.description === 'string' ? order.attributes.description : ''
        // The tenant is the marketplace resource's scope before its creation is told: the event
        // names the order's offering.
        await insertResource(
          ctx,
          trx,
          { type: TYPES.tenant, name, description, settingsId, projectId: order.resource.projectId },
          async (_, id) => {
            await repo.insertExt('cloud_b_tenants', { resource_id: id, limits: toJson(order.limits) })
            await repo.setResourceScope(order.resource.id, TYPES.tenant, id)
          },
        )
        return { state: 'pending' }
      }
      case 'Update': {
        const id = order.resource.scopeType === TYPES.tenant ? order.resource.scopeId : null
        if (id == null) throw new Error('The resource has no tenant.')
        await repo.updateExt('cloud_b_tenants', id, { limits: toJson(order.limits) })
        const moved = await moveCloudResource(ctx, trx, id, ['OK'], 'UPDATE_SCHEDULED', {
          modified: ctx.clock().toISOString(),
        })
        if (!moved) throw new Error('The tenant is not in OK state.')
        await enqueueStep(ctx, trx, { id, op: 'update' })
        return { state: 'pending' }
      }
      case 'Terminate': {
        const id = order.resource.scopeType === TYPES.tenant ? order.resource.scopeId : null
        const row = id == null ? undefined : await repo.resource(id)
        if (!row) return { state: 'done' }
        const moved = await moveCloudResource(ctx, trx, row.id, ['OK', 'ERRED'], 'DELETION_SCHEDULED', {
          modified: ctx.clock().toISOString(),
        })
        if (!moved) throw new Error('The tenant must be in OK or ERRED state to be deleted.')
        await enqueueStep(ctx, trx, { id: row.id, op: 'delete', wasErred: row.state === 'ERRED' })
        return { state: 'pending' }
      }
    }
  },
}

const ORDER_OF_OP = { create: 'Create', update: 'Update', delete: 'Terminate' } as const

/** Completes the order waiting on a tenant's step. */
export function completeTenantOrders(): void {
  onTenantSettled(async (ctx: AppContext, id, op, outcome) => {
    if (op === 'pull') return
    const order = await cloudBRepository(ctx.db).executingOrderFor(TYPES.tenant, id)
    if (!order || order.type !== ORDER_OF_OP[op]) return
    if (outcome === 'ERRED') {
      const row = await cloudBRepository(ctx.db).resource(id)
      await completeOrder(ctx, order.id, 'erred', row?.error_message ?? '', row?.error_traceback ?? '')
    } else {
      await completeOrder(ctx, order.id, 'done')
    }
  })
}
