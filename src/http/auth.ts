// Token authentication. Tokens are stored as SHA-256 hashes; a presented key is hashed and looked
// up by hash (an index probe, no secret comparison in SQL), then compared in constant time.
import { createHash, hash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Kysely } from 'kysely'
import type { DB } from '../db/tables.js'
import { parseJson, toBool } from '../db/values.js'
import { grantUnexpired } from '../db/sql.js'
import { unauthenticated } from './errors.js'
import { requireStaff, type Actor, type Grant, type RoleName, type ScopeType } from './permissions.js'

const scryptAsync = promisify(scrypt) as (pw: string, salt: Buffer, len: number) => Promise<Buffer>

/** SHA-256 in hex: the one-shot digest where Node.js has it (20.12 and later), no Hash object
 * per request. */
const sha256Hex: (key: string) => string =
  typeof hash === 'function'
    ? (key) => hash('sha256', key, 'hex')
    : (key) => createHash('sha256').update(key).digest('hex')

export function hashToken(key: string): string {
  return sha256Hex(key)
}

export function generateTokenKey(): string {
  return randomBytes(20).toString('hex')
}

/** The password key derivation, an object so that tests can count its calls. */
export const passwordKdf = {
  derive: (password: string, salt: Buffer, length: number): Promise<Buffer> =>
    scryptAsync(password, salt, length),
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const hash = await passwordKdf.derive(password, salt, 32)
  return `scrypt$${salt.toString('hex')}$${hash.toString('hex')}`
}

/** Derived in place of a check when there is no password to check against (see verifyPassword). */
const DUMMY_SALT = randomBytes(16)

/**
 * Checks a password against a stored hash. Without a usable hash (an unknown user, a user without
 * a password) the same derivation runs on a dummy salt and the answer is false: a login then costs
 * the same whether or not the username exists, and its time tells nothing.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, saltHex, hashHex] = (stored ?? '').split('$')
  if (scheme !== 'scrypt' || !saltHex || !hashHex) {
    await passwordKdf.derive(password, DUMMY_SALT, 32)
    return false
  }
  const expected = Buffer.from(hashHex, 'hex')
  const actual = await passwordKdf.derive(password, Buffer.from(saltHex, 'hex'), expected.length)
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}

/** Loads a user with its active, unexpired role grants. */
export async function loadActor(db: Kysely<DB>, userId: number, now: string): Promise<Actor | null> {
  const user = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst()
  if (!user) return null
  const grants = await db
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .leftJoin('projects', (j) =>
      j.onRef('projects.id', '=', 'user_roles.scope_id').on('user_roles.scope_type', '=', 'project'),
    )
    .select(['roles.name as role', 'user_roles.scope_type', 'user_roles.scope_id', 'projects.customer_id'])
    .where('user_roles.user_id', '=', userId)
    .where('user_roles.is_active', '=', 1)
    .where((eb) => grantUnexpired(eb, now))
    .execute()
  return {
    id: user.id,
    uuid: user.uuid,
    username: user.username,
    fullName: user.full_name,
    email: user.email,
    civilNumber: user.civil_number,
    isStaff: toBool(user.is_staff),
    isSupport: toBool(user.is_support),
    affiliations: parseJson<string[]>(user.affiliations, []),
    identitySource: user.identity_source,
    image: user.image,
    grants: grants.map((g): Grant => ({
      role: g.role as RoleName,
      scopeType: g.scope_type as ScopeType,
      scopeId: g.scope_id,
      customerId: g.customer_id ?? null,
    })),
    ...(toBool(user.is_active) ? {} : { inactive: true }),
  }
}

interface CacheEntry {
  actor: Actor | 'inactive'
  keyHash: string
  expires: number
  generation: number
}

/**
 * In-process cache of token → actor, bounded in time by TOKEN_CACHE_SECONDS and dropped whenever
 * this process changes users or grants (so a revocation made here applies at once).
 */
export class TokenCache {
  private entries = new Map<string, CacheEntry>()
  private generation = 0
  constructor(private readonly ttlMs: number) {}

  get(keyHash: string, now: number): CacheEntry | undefined {
    if (this.ttlMs <= 0) return undefined
    const e = this.entries.get(keyHash)
    if (!e || e.expires <= now || e.generation !== this.generation) return undefined
    return e
  }

  set(keyHash: string, actor: Actor | 'inactive', now: number): void {
    if (this.ttlMs <= 0) return
    if (this.entries.size > 10000) this.entries.clear()
    this.entries.set(keyHash, { actor, keyHash, expires: now + this.ttlMs, generation: this.generation })
  }

  invalidate(): void {
    this.generation++
    this.entries.clear()
  }
}

export type AuthMode = 'required' | 'optional'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'optional': anonymous callers allowed (a bad token is still 401). Default 'required'. */
    auth?: AuthMode
  }
  interface FastifyRequest {
    actor: Actor | null
    /** Why authentication failed, answered after the rate limit has counted the request. */
    authError: Error | null
  }
}

/**
 * Reads `Authorization: Token <key>` (or the `x-auth-token` query parameter) and sets
 * request.actor. With `deferFailure` (a rate limit counts requests between the two), a failure is
 * kept in request.authError and answered by `installAuthCheck`'s hook, so that the hooks between
 * see who the caller is, or that it is not authenticated; without it, the failure is answered
 * at once. A token already in the cache is checked without a promise: the hook runs on every
 * request.
 */
export function installAuth(
  app: FastifyInstance,
  db: Kysely<DB>,
  cache: TokenCache,
  clock: () => Date,
  { deferFailure = false }: { deferFailure?: boolean } = {},
): void {
  app.decorateRequest('actor', null)
  app.decorateRequest('authError', null)
  app.addHook('onRequest', (request: FastifyRequest, _reply, done) => {
    const fail = (e: unknown) => {
      if (!deferFailure) return done(e as Error)
      request.authError = e as Error
      done()
    }
    let lookup: Promise<void> | undefined
    try {
      lookup = authenticate(request, db, cache, clock)
    } catch (e) {
      return fail(e)
    }
    if (lookup) lookup.then(() => done(), fail)
    else done()
  })
}

/** Answers the authentication failure found by `installAuth`'s hook (with `deferFailure`). */
export function installAuthCheck(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    done(request.authError ?? undefined)
  })
}

/**
 * Sets request.actor from the presented token, or throws the 401. Answers a promise only when the
 * token is not in the cache and has to be looked up.
 */
function authenticate(
  request: FastifyRequest,
  db: Kysely<DB>,
  cache: TokenCache,
  clock: () => Date,
): Promise<void> | undefined {
  const mode: AuthMode | 'none' = request.routeOptions.config.auth ?? (request.is404 ? 'none' : 'required')
  if (mode === 'none') return
  const key = presentedKey(request)
  if (key === undefined) {
    if (mode === 'required') throw unauthenticated('Authentication credentials were not provided.')
    return
  }
  const now = clock()
  const keyHash = hashToken(key)
  const entry = cache.get(keyHash, now.getTime())
  if (entry) {
    setActor(request, entry.actor)
    return
  }
  return lookUpToken(db, cache, keyHash, now).then((actor) => setActor(request, actor))
}

function setActor(request: FastifyRequest, actor: Actor | 'inactive'): void {
  if (actor === 'inactive') throw unauthenticated('User inactive or deleted.')
  request.actor = actor
}

/** The token's user (or 'inactive'), read from the database and kept in the cache. */
async function lookUpToken(
  db: Kysely<DB>,
  cache: TokenCache,
  keyHash: string,
  now: Date,
): Promise<Actor | 'inactive'> {
  const row = await db
    .selectFrom('tokens')
    .select(['user_id', 'key_hash'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst()
  if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(keyHash))) {
    throw unauthenticated('Invalid token.')
  }
  const actor = await loadActor(db, row.user_id, now.toISOString())
  if (!actor) throw unauthenticated('Invalid token.')
  const value = (actor as Actor & { inactive?: boolean }).inactive ? 'inactive' : actor
  cache.set(keyHash, value, now.getTime())
  return value
}

/**
 * The API token the request presented (header or `x-auth-token`), for the rare operation that
 * hands it on (an event queue's passcode); the request has already been authenticated with it.
 */
export function presentedToken(request: FastifyRequest): string | undefined {
  return presentedKey(request)
}

function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (header === undefined || header === '') {
    const q = (request.query as Record<string, unknown> | undefined)?.['x-auth-token']
    return typeof q === 'string' && q ? q : undefined
  }
  const parts = header.trim().split(/\s+/)
  if (parts[0]?.toLowerCase() !== 'token') {
    // Another scheme (e.g. Basic): treated as no token credentials.
    return undefined
  }
  if (parts.length === 1) throw unauthenticated('Invalid token. No credentials provided.')
  if (parts.length > 2) throw unauthenticated('Invalid token. Token string should not contain spaces.')
  const key = parts[1]!
  if (key.length > 256) throw unauthenticated('Invalid token.')
  return key
}

/** A route hook for staff-only routes: 403 before the body is looked at. */
export async function staffOnly(request: FastifyRequest): Promise<void> {
  requireStaff(actorOf(request))
}

/** The authenticated caller of a route with auth 'required'. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw unauthenticated('Authentication credentials were not provided.')
  return request.actor
}
