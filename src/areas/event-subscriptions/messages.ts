// What the relay reads (the event log, through the events area's public functions, handed in as an
// `EventSource`) and what it sends: for each event, the kind of queue that observes it and the JSON
// body the reference's site agent reads from that kind of queue. A role grant's message names what
// its event does not carry (the user's username, the project's name and the offerings of the
// project's resources), and so does an offering user's whose username is set (the backend ids of
// the user's resources of the offering): the relay reads those `MessageFacts` for a whole batch
// of events at once.
import type { AppContext } from '../../context.js'
import type { StoredEvent } from '../events/service.js'
import { hex } from './broker.js'

export type { StoredEvent }

/** The event log's reading side, as the relay uses it. */
export interface EventSource {
  /** Up to `limit` committed events after `position`, in position order. */
  eventsAfter(ctx: AppContext, position: number, limit: number): Promise<StoredEvent[]>
  /** Calls `listener` whenever events may have been committed; answers the function that stops it. */
  onEventsCommitted(ctx: AppContext, listener: () => void): () => void
}

/** The kinds of queue an agent may ask for (the reference's observable object types). */
export const OBSERVABLE_OBJECT_TYPES = [
  'order',
  'user_role',
  'resource',
  'offering_user',
  'importable_resources',
  'service_account',
  'course_account',
  'resource_periodic_limits',
  'offering_resources_sync',
  'resource_api_key_rotation',
  'resource_end_date_change_request',
  'user_lifecycle',
  'user_profile',
  'user_ssh_key',
] as const
export type ObservableObjectType = (typeof OBSERVABLE_OBJECT_TYPES)[number]

/** A message for the queues of one offering and one object type. */
export interface QueueMessage {
  objectType: ObservableObjectType
  offeringUuid: string
  body: Record<string, unknown>
}

/**
 * What the events of a batch need besides themselves, read when the batch is sent: for role grants,
 * the username of each user they name, and each project's name and the offerings of its resources
 * that are not Terminated; for offering users given a username, the backend ids of the offering's
 * resources (not Terminated, with a backend id) in the projects where the user holds a role.
 */
export interface MessageFacts {
  usernames: ReadonlyMap<string, string>
  projects: ReadonlyMap<string, { name: string; offerings: readonly string[] }>
  /** By `accountKey(user uuid, offering uuid)`. */
  accountResources: ReadonlyMap<string, readonly string[]>
}

/** The key of a user's account on an offering in `MessageFacts.accountResources`. */
export const accountKey = (user: string, offering: string): string => `${user}:${offering}`

/** A non-empty string, or null. */
const text = (v: unknown): string | null => (typeof v === 'string' && v ? v : null)

/** A grant or revocation of a role on a project: the only grants the agent's `user_role` reads. */
function projectGrant(event: StoredEvent): { user: string; project: string; granted: boolean } | null {
  if (event.objectType !== 'role_grant') return null
  const granted = event.envelope.type === 'role.granted'
  if (!granted && event.envelope.type !== 'role.revoked') return null
  const data = event.envelope.data
  if (data.scope_type !== 'project') return null
  const user = data.user_uuid
  const project = data.scope_uuid
  if (typeof user !== 'string' || !user || typeof project !== 'string' || !project) return null
  return { user, project, granted }
}

const OFFERING_USER_CREATED = 'marketplace.offering_user.created'

/** The agent's action for each offering user event (a username set aside: see `offeringUserMessages`). */
const OFFERING_USER_ACTIONS: Readonly<Record<string, string>> = {
  [OFFERING_USER_CREATED]: 'create',
  'marketplace.offering_user.state_changed': 'update',
  'marketplace.offering_user.username_changed': 'update',
  'marketplace.offering_user.deleted': 'delete',
}

/**
 * An offering user's event that gives it a username (created with one, or its username changed
 * to one): its user and offering, else null.
 */
function usernameSet(event: StoredEvent): { user: string; offering: string } | null {
  if (event.objectType !== 'offering_user') return null
  const type = event.envelope.type
  if (type !== OFFERING_USER_CREATED && type !== 'marketplace.offering_user.username_changed') return null
  const data = event.envelope.data
  const user = text(data.user_uuid)
  if (!text(data.username) || !user || !event.offeringUuid) return null
  return { user, offering: event.offeringUuid }
}

/** What a batch's events name that `MessageFacts` are read for: users, projects, accounts. */
export function factsWanted(events: readonly StoredEvent[]): {
  users: string[]
  projects: string[]
  accounts: { user: string; offering: string }[]
} {
  const users = new Set<string>()
  const projects = new Set<string>()
  const accounts = new Map<string, { user: string; offering: string }>()
  for (const e of events) {
    const g = projectGrant(e)
    if (g) {
      users.add(g.user)
      projects.add(g.project)
    }
    const a = usernameSet(e)
    if (a) accounts.set(accountKey(a.user, a.offering), a)
  }
  return { users: [...users], projects: [...projects], accounts: [...accounts.values()] }
}

/**
 * The messages of an offering user's event on its offering's `offering_user` queues, in the body
 * the agent's handler reads: `{"offering_user_uuid", "user_uuid", "username", "state", "action",
 * "offering_uuid"}` (`username` "" while it has none). The action is `create`, `update` (a state
 * changed, or the username cleared) or `delete`; a username given is `username_set`, with
 * `resource_backend_ids` (the agent adds the username to those resources); an account created
 * with a username gives `create`, then `username_set`.
 */
function offeringUserMessages(event: StoredEvent, facts: MessageFacts): QueueMessage[] {
  const data = event.envelope.data
  const offering = event.offeringUuid
  const uuid = text(data.uuid)
  const user = text(data.user_uuid)
  const action = OFFERING_USER_ACTIONS[event.envelope.type]
  if (!offering || !uuid || !user || !action) return []
  const message = (named: string, more: Record<string, unknown> = {}): QueueMessage => ({
    objectType: 'offering_user',
    offeringUuid: offering,
    body: {
      offering_user_uuid: hex(uuid),
      user_uuid: hex(user),
      username: text(data.username) ?? '',
      state: text(data.state) ?? '',
      action: named,
      offering_uuid: hex(offering),
      ...more,
    },
  })
  if (!usernameSet(event)) return [message(action)]
  const set = message('username_set', {
    resource_backend_ids: [...(facts.accountResources.get(accountKey(user, offering)) ?? [])],
  })
  return event.envelope.type === OFFERING_USER_CREATED ? [message(action), set] : [set]
}

/**
 * Every message an event gives: those of `messageFor`; an offering user's (`offeringUserMessages`);
 * and for a role granted on or revoked from a project, one `user_role` message per offering with
 * a resource (not Terminated) in the project when the event is sent: `{"user_uuid",
 * "user_username", "project_uuid", "project_name", "role_name", "granted", "offering_uuid"}`
 * (`granted` true or false). Grants on a customer or an offering give none (the agent's
 * `user_role` handler acts on a project's resources), nor does a grant whose user or project no
 * longer exists.
 */
export function messagesFor(event: StoredEvent, facts: MessageFacts): QueueMessage[] {
  if (event.objectType === 'offering_user') return offeringUserMessages(event, facts)
  const g = projectGrant(event)
  if (!g) {
    const m = messageFor(event)
    return m ? [m] : []
  }
  const username = facts.usernames.get(g.user)
  const project = facts.projects.get(g.project)
  if (username === undefined || !project) return []
  const role = event.envelope.data.role_name
  return [...new Set(project.offerings)].map((offering) => ({
    objectType: 'user_role' as const,
    offeringUuid: offering,
    body: {
      user_uuid: hex(g.user),
      user_username: username,
      project_uuid: hex(g.project),
      project_name: project.name,
      role_name: typeof role === 'string' ? role : '',
      granted: g.granted,
      offering_uuid: hex(offering),
    },
  }))
}

const ORDER_STATE_EVENTS = new Set(['marketplace.order.created', 'marketplace.order.state_changed'])

/**
 * The message an event gives, if any queue kind observes it:
 * - an order created or changing state: `order`, `{"order_uuid", "order_state", "offering_uuid"}`
 *   (the agent acts on the state it reads, and re-reads the order over REST);
 * - any change of a marketplace resource: `resource`, `{"resource_uuid"}`;
 * - a backend resource request created: `importable_resources`, `{"backend_resource_request_uuid"}`.
 * Uuids are written as 32 hex digits, as the reference writes them.
 */
export function messageFor(event: StoredEvent): QueueMessage | null {
  const data = event.envelope.data
  const offering = event.offeringUuid ?? text(data.offering_uuid)
  const uuid = text(data.uuid)
  if (!offering || !uuid) return null
  switch (event.objectType) {
    case 'order': {
      if (!ORDER_STATE_EVENTS.has(event.envelope.type)) return null
      const state = text(data.state_after)
      if (!state) return null
      return {
        objectType: 'order',
        offeringUuid: offering,
        body: { order_uuid: hex(uuid), order_state: state, offering_uuid: hex(offering) },
      }
    }
    case 'resource':
      return { objectType: 'resource', offeringUuid: offering, body: { resource_uuid: hex(uuid) } }
    case 'backend_resource_request':
      if (!event.envelope.type.endsWith('.created')) return null
      return {
        objectType: 'importable_resources',
        offeringUuid: offering,
        body: { backend_resource_request_uuid: hex(uuid) },
      }
    default:
      return null
  }
}
