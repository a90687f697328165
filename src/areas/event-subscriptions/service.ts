// Event subscriptions: a user's (a site agent's) wish to be told of changes, one RabbitMQ queue per
// offering and object type. Each user owns its subscriptions; staff and support read every one;
// only the owner (or staff) deletes one, and only the owner makes its queues, since the queue's
// passcode is the owner's token. A queue is made for an offering the owner may manage.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { toJson } from '../../db/values.js'
import { AppError, fieldError, forbidden } from '../../http/errors.js'
import { ownLink, recordRenderer } from '../../http/links.js'
import { canAsProvider, seesAll, type Actor } from '../../http/permissions.js'
import { pageOfRows, type Pager } from '../../http/resource-calls.js'
import { foundByUuid, normalizeUuid } from '../../http/uuid.js'
import { visibleRecords } from '../../http/visible-records.js'
import {
  BrokerError,
  brokerSettings,
  hex,
  ManagementApi,
  queueName,
  queuePrefix,
  rabbitUserName,
  vhostName,
} from './broker.js'
import {
  offeringByUuid,
  queuesRepository,
  subscriptionsRepository,
  type QueueRow,
  type SubscriptionRow,
  type SubscriptionScope,
} from './repository.js'
import {
  PATH,
  QUEUE_PATH,
  type AgentEventSubscriptionCreate,
  type EventSubscription,
  type EventSubscriptionQueue,
  type QueueCreate,
} from './schema.js'

export type { EventSource, StoredEvent } from './messages.js'
/** What another area's route declares for registering a subscription (the site agents' identities). */
export { AgentEventSubscriptionBody, EventSubscriptionSchema } from './schema.js'
export type { AgentEventSubscriptionCreate } from './schema.js'

export function visibility(actor: Actor): SubscriptionScope {
  return seesAll(actor) ? { all: true } : { all: false, userId: actor.id }
}

function observableObjects(value: unknown): EventSubscription['observable_objects'] {
  const list = typeof value === 'string' ? (JSON.parse(value) as unknown) : value
  return Array.isArray(list) ? (list as EventSubscription['observable_objects']) : []
}

const toRecord = recordRenderer<SubscriptionRow, EventSubscription>({
  ...ownLink(PATH),
  user: { link: 'users', from: 'user_uuid' },
  user_uuid: 'copy',
  user_username: 'copy',
  user_full_name: (r) => r.user_full_name ?? '',
  created: 'copy',
  modified: 'copy',
  source_ip: 'copy',
  description: (r) => r.description ?? '',
  observable_objects: (r) => observableObjects(r.observable_objects),
})

const subscriptions = visibleRecords({
  rows: subscriptionsRepository,
  visibility,
  model: 'EventSubscription',
  render: (_ctx, base, rows: SubscriptionRow[]) => rows.map((r) => toRecord(base, r)),
})
export const listSubscriptions = subscriptions.list
export const getSubscription = subscriptions.get

/**
 * Registers (201) or finds again (200) the subscription of an agent identity for one object type:
 * an agent registers at every start, and finds the one it had. The caller has been checked to
 * manage the identity (its offering).
 */
export async function registerForIdentity(
  ctx: AppContext,
  actor: Actor,
  identity: { id: number; offering_uuid: string },
  body: AgentEventSubscriptionCreate,
  sourceIp: string | null,
  base: string,
): Promise<{ created: boolean; record: EventSubscription }> {
  const repo = subscriptionsRepository(ctx.db)
  const now = ctx.clock().toISOString()
  const existing = await repo.registered(actor.id, identity.id, body.observable_object_type)
  if (existing) {
    await repo.update(existing.id, {
      ...(body.description === undefined ? {} : { description: body.description }),
      source_ip: sourceIp,
      modified: now,
    })
    return { created: false, record: await subscriptions.record(ctx, existing.id, base) }
  }
  const id = await repo.insert({
    uuid: ctx.newUuid(),
    user_id: actor.id,
    identity_id: identity.id,
    description: body.description ?? '',
    observable_objects: toJson([
      { object_type: body.observable_object_type, offering_uuid: identity.offering_uuid },
    ]),
    source_ip: sourceIp,
    created: now,
    modified: now,
  })
  return { created: true, record: await subscriptions.record(ctx, id, base) }
}

function queueRecord(base: string, q: QueueRow): EventSubscriptionQueue {
  return {
    uuid: q.uuid,
    url: `${base}/api/${QUEUE_PATH}/${q.uuid}/`,
    event_subscription: `${base}/api/${PATH}/${q.subscription_uuid}/`,
    event_subscription_uuid: hex(q.subscription_uuid),
    offering_uuid: hex(q.offering_uuid),
    object_type: q.object_type,
    queue_name: queueName(q.subscription_uuid, q.offering_uuid, q.object_type),
    vhost: vhostName(q.user_uuid),
    created: q.created,
  }
}

function unavailable(message: string): AppError {
  return new AppError('unavailable', message)
}

/**
 * POST event-subscriptions/{uuid}/create_queue/: the queue of one offering and object type (201
 * new, 200 again), made in RabbitMQ with the virtual host, the subscription's RabbitMQ user and
 * its rights. The user's password is the token of this request: the agent's STOMP passcode.
 */
export async function createQueue(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  body: QueueCreate,
  token: string | undefined,
  base: string,
): Promise<{ created: boolean; record: EventSubscriptionQueue }> {
  const subscription = await subscriptions.find(ctx, actor, uuid)
  if (subscription.user_id !== actor.id) {
    throw forbidden("Only the subscription's user may create its queues.")
  }
  const offeringUuid = normalizeUuid(body.offering_uuid)!
  const offering = await offeringByUuid(ctx.db, offeringUuid)
  if (!offering) throw fieldError('offering_uuid', `Object with uuid=${offeringUuid} does not exist.`)
  if (!canAsProvider(actor, 'OFFERING.UPDATE', offering)) {
    throw forbidden('You do not have permission to receive events of this offering.')
  }
  const settings = brokerSettings(ctx.config)
  if (!settings) throw unavailable('Event queues are not enabled on this server.')
  if (!token) throw forbidden('Event queues are made with a token: the token is the queue passcode.')
  const queues = queuesRepository(ctx.db)
  try {
    await new ManagementApi(settings).ensureQueue({
      vhost: vhostName(subscription.user_uuid),
      user: rabbitUserName(subscription.uuid),
      password: token,
      readPattern: `^${queuePrefix(subscription.uuid)}`,
      queue: queueName(subscription.uuid, offering.uuid, body.object_type),
    })
  } catch (e) {
    ctx.log.error({ err: e }, 'event queue: RabbitMQ refused or did not answer')
    if (e instanceof BrokerError) throw unavailable('The message broker is not available; try again later.')
    throw e
  }
  let existing = await queues.byKey(subscription.id, offering.id, body.object_type)
  let created = false
  if (!existing) {
    try {
      await queues.insert({
        uuid: ctx.newUuid(),
        subscription_id: subscription.id,
        offering_id: offering.id,
        object_type: body.object_type,
        created: ctx.clock().toISOString(),
      })
      created = true
    } catch (e) {
      // A racing request made the same queue first.
      if (!(await queues.byKey(subscription.id, offering.id, body.object_type))) throw e
    }
    existing = (await queues.byKey(subscription.id, offering.id, body.object_type))!
  }
  return { created, record: queueRecord(base, existing) }
}

/**
 * DELETE event-subscriptions/{uuid}/ (the agent does it when it stops): the subscription and its
 * queues go; their RabbitMQ user and queues are removed too, and a broker that does not answer
 * does not keep the subscription (what is left there is logged).
 */
export async function deleteSubscription(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const subscription = await subscriptions.find(ctx, actor, uuid)
  if (subscription.user_id !== actor.id && !actor.isStaff) throw forbidden()
  const queues = await queuesRepository(ctx.db).ofSubscription(subscription.id)
  await subscriptionsRepository(ctx.db).delete(subscription.id)
  const settings = brokerSettings(ctx.config)
  if (!settings) return
  const broker = {
    vhost: vhostName(subscription.user_uuid),
    user: rabbitUserName(subscription.uuid),
    queues: queues.map((q) => queueName(subscription.uuid, q.offering_uuid, q.object_type)),
  }
  try {
    await new ManagementApi(settings).removeSubscription(broker)
  } catch (e) {
    ctx.log.error(
      { err: e, ...broker },
      'event subscription deleted; its RabbitMQ user and queues were not removed',
    )
  }
}

// ---- queues (read-only) ----

/** GET event-subscription-queues/: the queues of the subscriptions the caller sees. */
export function listQueues(
  ctx: AppContext,
  scope: SubscriptionScope,
  listing: Listing,
  base: string,
  page: Pager<EventSubscriptionQueue>,
) {
  return pageOfRows(page, queuesRepository(ctx.db).scoped(), scope, listing, (rows) =>
    rows.map((r) => queueRecord(base, r)),
  )
}

export async function getQueue(ctx: AppContext, scope: SubscriptionScope, uuid: string, base: string) {
  const row = await foundByUuid(
    uuid,
    (u) => queuesRepository(ctx.db).visibleByUuid(scope, u),
    'EventSubscriptionQueue',
  )
  return queueRecord(base, row)
}
