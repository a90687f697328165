// An order's PDF attachment: kept in the upload directory, named by the order's uuid.
import { mkdirSync, createReadStream, existsSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AppContext } from '../../context.js'
import { fieldError, forbidden, invalidState, notFound } from '../../http/errors.js'
import { can, type Actor } from '../../http/permissions.js'
import { tellOrderChange } from './events.js'
import { ordersRepository, type OrderRow } from './repository.js'
import type { OrderState } from './state-machine.js'
import { PATH } from './schema.js'
import { consumerScopes, findVisible } from './order-rules.js'

function attachmentPath(ctx: AppContext, uuid: string): string {
  return join(ctx.config.uploadDir, 'orders', `${uuid}.pdf`)
}

export function removeAttachmentFile(ctx: AppContext, uuid: string) {
  const p = attachmentPath(ctx, uuid)
  if (existsSync(p)) unlinkSync(p)
}

function attachmentAllowed(actor: Actor, o: OrderRow): boolean {
  return (
    o.created_by_id === actor.id ||
    can(actor, 'ORDER.CANCEL', consumerScopes(o)) ||
    can(actor, 'ORDER.APPROVE', consumerScopes(o))
  )
}

const PENDING: readonly OrderState[] = [
  'pending-consumer',
  'pending-provider',
  'pending-project',
  'pending-start-date',
]

export async function updateAttachment(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  file: { mimetype: string; data: Buffer } | null,
  base: string,
): Promise<{ attachment: string }> {
  const o = await findVisible(ctx, actor, uuid)
  if (!attachmentAllowed(actor, o)) throw forbidden()
  if (!PENDING.includes(o.state as OrderState)) throw invalidState(PENDING)
  if (!file) throw fieldError('attachment', 'No file was submitted.')
  if (file.mimetype !== 'application/pdf' || file.data.subarray(0, 5).toString('latin1') !== '%PDF-') {
    throw fieldError('attachment', 'Only PDF files are accepted.')
  }
  const path = attachmentPath(ctx, o.uuid)
  mkdirSync(join(ctx.config.uploadDir, 'orders'), { recursive: true })
  writeFileSync(path, file.data)
  await ctx.db.transaction().execute(async (trx) => {
    await ordersRepository(trx).update(o.id, {
      attachment: `orders/${o.uuid}.pdf`,
      modified: ctx.clock().toISOString(),
    })
    await tellOrderChange(ctx, trx, o.id, 'attachment_changed', { attachment: true })
  })
  return { attachment: `${base}/api/${PATH}/${o.uuid}/attachment/` }
}

export async function deleteAttachment(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const o = await findVisible(ctx, actor, uuid)
  if (!attachmentAllowed(actor, o)) throw forbidden()
  if (!PENDING.includes(o.state as OrderState)) throw invalidState(PENDING)
  await ctx.db.transaction().execute(async (trx) => {
    await ordersRepository(trx).update(o.id, { attachment: null, modified: ctx.clock().toISOString() })
    await tellOrderChange(ctx, trx, o.id, 'attachment_changed', { attachment: false })
  })
  removeAttachmentFile(ctx, o.uuid)
}

export async function openAttachment(ctx: AppContext, actor: Actor, uuid: string) {
  const o = await findVisible(ctx, actor, uuid)
  const path = attachmentPath(ctx, o.uuid)
  if (!o.attachment || !existsSync(path)) throw notFound('The order has no attachment.')
  return createReadStream(path)
}
