// SSH keys: each user keeps its own public keys; staff and support read every key, and a key
// marked shared is shown to everybody. A service provider reads the keys of the users of its
// resources (its site agent puts them on the backend).
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { fieldError, forbidden } from '../../http/errors.js'
import { ownLink, recordRenderer } from '../../http/links.js'
import { providerVisibility, seesAll, type Actor } from '../../http/permissions.js'
import { pageOfRows, type Pager } from '../../http/resource-calls.js'
import { foundByUuid } from '../../http/uuid.js'
import { eachRow, visibleRecords } from '../../http/visible-records.js'
import { parsePublicKey } from './fingerprints.js'
import { sshKeysRepository, type KeyScope, type SshKeyRow } from './repository.js'
import { PATH, type SshKey, type SshKeyCreate } from './schema.js'

export function visibility(actor: Actor): KeyScope {
  return seesAll(actor) ? { all: true } : { all: false, userId: actor.id }
}

const toRecord = recordRenderer<SshKeyRow, SshKey>({
  ...ownLink(PATH),
  name: 'copy',
  public_key: 'copy',
  fingerprint_md5: 'copy',
  fingerprint_sha256: 'copy',
  fingerprint_sha512: 'copy',
  user_uuid: 'copy',
  is_shared: 'flag',
  type: (r) => r.public_key.split(/\s+/)[0] ?? '',
})

const keys = visibleRecords({
  rows: sshKeysRepository,
  visibility,
  model: 'SshPublicKey',
  render: eachRow(toRecord),
})
export const listKeys = keys.list
export const getKey = keys.get

export async function createKey(
  ctx: AppContext,
  actor: Actor,
  body: SshKeyCreate,
  base: string,
): Promise<SshKey> {
  const name = (body.name ?? '').trim()
  const key = parsePublicKey(body.public_key)
  if (!key) {
    throw fieldError(
      'public_key',
      /[\r\n]/.test(body.public_key.trim())
        ? 'Key is not valid: it should be single line.'
        : 'Invalid SSH public key.',
    )
  }
  const now = ctx.clock().toISOString()
  const id = await sshKeysRepository(ctx.db).insertIfNameFree({
    uuid: ctx.newUuid(),
    user_id: actor.id,
    name,
    public_key: key.publicKey,
    fingerprint_md5: key.md5,
    fingerprint_sha256: key.sha256,
    fingerprint_sha512: key.sha512,
    created: now,
    modified: now,
  })
  if (id === undefined) throw fieldError('name', 'This field must be unique.')
  return keys.record(ctx, id, base)
}

/** Its owner or staff delete a key; a shared key only staff. */
export async function deleteKey(ctx: AppContext, actor: Actor, uuid: string): Promise<void> {
  const row = await keys.find(ctx, actor, uuid)
  if (row.is_shared && !actor.isStaff)
    throw forbidden('Only staff users are allowed to delete shared SSH public key.')
  if (row.user_id !== actor.id && !actor.isStaff) throw forbidden()
  await sshKeysRepository(ctx.db).delete(row.id)
}

/**
 * The keys of the users of a service provider's resources: for staff, support, and the provider
 * side (a role in its organization, or managing one of its offerings).
 */
export async function listProviderKeys(
  ctx: AppContext,
  actor: Actor,
  providerUuid: string,
  listing: Listing,
  base: string,
  page: Pager<SshKey>,
): Promise<SshKey[]> {
  const repo = sshKeysRepository(ctx.db)
  const provider = await foundByUuid(providerUuid, (u) => repo.providerByUuid(u), 'ServiceProvider')
  const vis = providerVisibility(actor)
  const permitted =
    vis.all ||
    vis.customerIds.includes(provider.customer_id) ||
    (await repo.anyOfferingOf(vis.offeringIds, provider.customer_id))
  if (!permitted) throw forbidden()
  const scope: KeyScope = {
    all: false,
    providerCustomerId: provider.customer_id,
    now: ctx.clock().toISOString(),
  }
  return pageOfRows(page, repo, scope, listing, (rows) => rows.map((r) => toRecord(base, r)))
}
