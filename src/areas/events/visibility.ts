// Who sees an event: exactly who the REST API lets see its object, asked of the object's own area
// when the event is sent (so a grant ended since then hides what it used to show). Staff and
// support see every event. An event about an object that is gone, or of a kind no rule here
// names, is seen by staff and support only.
import type { AppContext } from '../../context.js'
import { AppError } from '../../http/errors.js'
import { seesAll, type Actor } from '../../http/permissions.js'
import { findVisibleOffering, findVisibleResource } from '../catalog/service.js'
import { findVisibleCustomer, findVisibleProject } from '../directory/service.js'
import { findVisibleOrder } from '../orders/service.js'
import { get as getBackendRequest } from '../backend-requests/service.js'
import { getPolicy as getCostPolicy } from '../cost-policies/service.js'
import { getRequest as getPermissionRequest, requestVisibility } from '../invitations/requests.js'
import { findReadableInvitation } from '../invitations/service.js'
import { getService as getAgentService, visibility as agentVisibility } from '../site-agents/service.js'
import { cloudEventObjects, cloudTypeOfEventObject } from '../cloud/lifecycle.js'
import { findVisibleResource as findVisibleCloudResource } from '../cloud/access.js'
import { findVisibleMigration } from '../cloud-b/migrations.js'
import { getOfferingUser } from '../offering-users/service.js'
import type { StoredEvent } from './outbox.js'

/** Does `find` find it (a 404 or 403 of the area: no)? */
async function found(find: () => Promise<unknown>): Promise<boolean> {
  try {
    await find()
    return true
  } catch (e) {
    if (e instanceof AppError && (e.kind === 'not_found' || e.kind === 'forbidden')) return false
    throw e
  }
}

type Rule = (ctx: AppContext, actor: Actor, data: Record<string, unknown>) => Promise<boolean>

const text = (v: unknown): string => (typeof v === 'string' ? v : '')

/** Each object type's rule: the area's own 404 check on the object (or on the scope it is seen through). */
const RULES: Record<string, Rule> = {
  order: (ctx, actor, d) => found(() => findVisibleOrder(ctx, actor, text(d.uuid))),
  resource: (ctx, actor, d) => found(() => findVisibleResource(ctx, actor, text(d.uuid))),
  backend_resource_request: (ctx, actor, d) => found(() => getBackendRequest(ctx, actor, text(d.uuid), '')),
  permission_request: (ctx, actor, d) =>
    found(() => getPermissionRequest(ctx, requestVisibility(actor), text(d.uuid), '')),
  invitation: (ctx, actor, d) => found(() => findReadableInvitation(ctx, actor, text(d.uuid))),
  migration: (ctx, actor, d) => found(() => findVisibleMigration(ctx, actor, text(d.uuid))),
  cost_policy: (ctx, actor, d) => found(() => getCostPolicy(ctx, actor, text(d.uuid), '')),
  offering_user: (ctx, actor, d) => found(() => getOfferingUser(ctx, actor, text(d.uuid), '')),
  site_agent_service: (ctx, actor, d) =>
    found(() => getAgentService(ctx, agentVisibility(actor), text(d.uuid), '')),
  // A grant is listed under its scope; its user also sees it among their own.
  role_grant: async (ctx, actor, d) => {
    if (d.user_uuid === actor.uuid) return true
    const scope = text(d.scope_uuid)
    switch (d.scope_type) {
      case 'customer':
        return found(() => findVisibleCustomer(ctx, actor, scope))
      case 'project':
        return found(() => findVisibleProject(ctx, actor, scope))
      case 'offering':
        return found(() => findVisibleOffering(ctx, actor, scope))
      default:
        return false
    }
  },
}

/** A cloud resource's events (public IPs, floating IPs, routers, ...): its area's 404 check. */
const cloudRule =
  (objectType: string): Rule =>
  (ctx, actor, d) => {
    const def = cloudTypeOfEventObject(objectType)
    return def
      ? found(() => findVisibleCloudResource(ctx, actor, def.type, text(d.uuid)))
      : Promise.resolve(false)
  }

function ruleOf(objectType: string): Rule | undefined {
  return RULES[objectType] ?? (cloudTypeOfEventObject(objectType) ? cloudRule(objectType) : undefined)
}

/** The object types events are told about whose visibility a rule decides. */
export function ruledObjectTypes(): string[] {
  return [...Object.keys(RULES), ...cloudEventObjects()]
}

/**
 * The answers of one reader's checks, kept while it sends one batch (one look per object per
 * batch; the next batch looks again, so a change of visibility shows from there on).
 */
export class VisibilityCheck {
  readonly #seen = new Map<string, Promise<boolean>>()
  constructor(
    private readonly ctx: AppContext,
    private readonly actor: Actor,
  ) {}

  sees(e: StoredEvent): Promise<boolean> {
    if (seesAll(this.actor)) return Promise.resolve(true)
    const rule = ruleOf(e.objectType)
    if (!rule) return Promise.resolve(false)
    const data = e.envelope.data ?? {}
    const key = `${e.objectType}:${text(data.uuid)}:${text(data.scope_uuid)}:${text(data.user_uuid)}`
    let answer = this.#seen.get(key)
    if (!answer) this.#seen.set(key, (answer = rule(this.ctx, this.actor, data)))
    return answer
  }

  /** The events the actor sees, in their order. */
  async filter(events: StoredEvent[]): Promise<StoredEvent[]> {
    const seen = await Promise.all(events.map((e) => this.sees(e)))
    return events.filter((_, i) => seen[i])
  }
}
