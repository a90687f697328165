// What a journey knows of the world: the app's address and a generated client per user, like any
// client of the API, plus what the test harness provides for setup outside the nine contract
// areas (users, organizations, projects, offerings and plans, roles) and for time (the job queue,
// the clock). Only wire data crosses this boundary (uuids, URLs, tokens), so the journey files
// are type-checked against the generated client alone (tsconfig.journey.json).
import type { Api } from './client.js'

/** A record as a client holds it: its uuid, its URL at this app and a name. */
export interface Link {
  uuid: string
  url: string
  name: string
}

export interface User {
  uuid: string
  url: string
  username: string
  token: string
}

export type RoleName =
  | 'CUSTOMER.OWNER'
  | 'CUSTOMER.MANAGER'
  | 'CUSTOMER.SUPPORT'
  | 'PROJECT.ADMIN'
  | 'PROJECT.MANAGER'
  | 'PROJECT.MEMBER'
  | 'OFFERING.MANAGER'

export type OfferingType =
  'Marketplace.Basic' | 'Marketplace.Slurm' | 'Support.OfferingTemplate' | 'CloudB.Tenant'

export interface World {
  /** The app's address, as `http://host:port`. */
  baseUrl: string
  /** A generated client acting as this user, or anonymous. */
  api(user?: User): Api
  /** A request outside the nine contract areas (setup only), as this user; JSON in and out. */
  http<T = any>(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    user?: User,
    body?: unknown,
  ): Promise<{ status: number; body: T }>
  /** Runs every queued job now (provisioning, callbacks, policy checks), as a worker would. */
  drain(): Promise<void>
  clock: { now(): Date; advanceHours(hours: number): void }

  user(opts?: { staff?: boolean; support?: boolean; fullName?: string }): Promise<User>
  customer(): Promise<Link>
  /** An organization registered as a service provider. */
  provider(): Promise<Link>
  project(customer: Link): Promise<Link>
  grant(user: User, role: RoleName, scope: Link): Promise<void>
  offering(provider: Link, opts: { type: OfferingType; serviceSettings?: Link }): Promise<Link>
  /** A plan billed monthly at `unitPrice`. */
  plan(offering: Link, unitPrice: number): Promise<Link>
}

/** A journey: a sentence and the steps a client takes. */
export interface Journey {
  name: string
  run(world: World): Promise<void>
}

/** A new user holding `role` on `scope`. */
export async function userWith(
  w: World,
  role: RoleName,
  scope: Link,
  opts?: Parameters<World['user']>[0],
): Promise<User> {
  const user = await w.user(opts)
  await w.grant(user, role, scope)
  return user
}

/** An organization, a project of it and the organization's owner (made with `ownerOpts`). */
export async function ownedProject(w: World, ownerOpts?: Parameters<World['user']>[0]) {
  const organization = await w.customer()
  const project = await w.project(organization)
  const owner = await userWith(w, 'CUSTOMER.OWNER', organization, ownerOpts)
  return { organization, project, owner }
}

/** A service provider, a user holding `role` on it and an offering of `type` it provides. */
export async function providerOffering(w: World, role: RoleName, type: OfferingType) {
  const provider = await w.provider()
  const user = await userWith(w, role, provider)
  const offering = await w.offering(provider, { type })
  return { provider, user, offering }
}
