// Which user attributes an offering shows its provider: stored per offering; an offering without
// a config of its own exposes the default set (username, full name, e-mail). Read by whoever sees
// the offering; written by those who may edit it.
import type { AppContext } from '../../context.js'
import { toJson } from '../../db/values.js'
import { forbidden } from '../../http/errors.js'
import { canAsProvider, type Actor } from '../../http/permissions.js'
import { findVisibleOffering } from '../catalog/service.js'
import { attributeConfigsRepository } from './repository.js'
import { exposedOf } from './service.js'
import {
  DEFAULT_EXPOSED,
  USER_ATTRIBUTES,
  type AttributeConfig,
  type AttributeConfigUpdate,
  type UserAttribute,
} from './schema.js'

interface OfferingRef {
  id: number
  uuid: string
  name: string
  customer_id: number
  created: string
  modified: string
}

async function render(ctx: AppContext, offering: OfferingRef): Promise<AttributeConfig> {
  const row = await attributeConfigsRepository(ctx.db).findByOffering(offering.id)
  const exposed = new Set(exposedOf(row?.exposed))
  const flags = Object.fromEntries(USER_ATTRIBUTES.map((a) => [`expose_${a}`, exposed.has(a)]))
  return {
    // A default config is no row of its own: it shows the offering's identity and times.
    uuid: row?.uuid ?? offering.uuid,
    created: row?.created ?? offering.created,
    modified: row?.modified ?? offering.modified,
    ...(flags as Omit<
      AttributeConfig,
      'uuid' | 'created' | 'modified' | 'exposed_fields' | 'is_default' | 'offering_uuid' | 'offering_name'
    >),
    exposed_fields: USER_ATTRIBUTES.filter((a) => exposed.has(a)),
    is_default: !row,
    offering_uuid: offering.uuid,
    offering_name: offering.name,
  }
}

export async function getAttributeConfig(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
): Promise<AttributeConfig> {
  return render(ctx, await findVisibleOffering(ctx, actor, uuid))
}

async function writableOffering(ctx: AppContext, actor: Actor, uuid: string) {
  const offering = await findVisibleOffering(ctx, actor, uuid)
  if (!canAsProvider(actor, 'OFFERING.UPDATE', offering)) throw forbidden()
  return offering
}

/**
 * POST and PUT set every flag (those not given take the default set's value); PATCH changes the
 * given flags of the current config (or of the default one).
 */
export async function updateAttributeConfig(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: AttributeConfigUpdate,
  partial: boolean,
): Promise<AttributeConfig> {
  const offering = await writableOffering(ctx, actor, uuid)
  const repo = attributeConfigsRepository(ctx.db)
  const current = new Set<UserAttribute>(
    partial ? exposedOf((await repo.findByOffering(offering.id))?.exposed) : DEFAULT_EXPOSED,
  )
  for (const a of USER_ATTRIBUTES) {
    const v = body[`expose_${a}`]
    if (v === true) current.add(a)
    if (v === false) current.delete(a)
  }
  const exposed = USER_ATTRIBUTES.filter((a) => current.has(a))
  await repo.upsert(offering.id, toJson(exposed), ctx.newUuid(), ctx.clock().toISOString())
  return render(ctx, offering)
}

/** The offering goes back to the default set. */
export async function deleteAttributeConfig(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const offering = await writableOffering(ctx, actor, uuid)
  await attributeConfigsRepository(ctx.db).delete(offering.id)
}
