// HTTP for /api/keys/ and /api/marketplace-service-providers/{uuid}/keys/.
import { Type } from '@sinclair/typebox'
import { filter } from '../../http/filters.js'
import { pager } from '../../http/query.js'
import { actionList, defineAction, defineResource, orderedBy, resourceRoutes } from '../../http/resource.js'
import * as svc from './service.js'
import * as s from './schema.js'

const K = 'ssh_keys'

const filters = {
  name: filter.contains(`${K}.name`),
  name_exact: filter.exact(`${K}.name`),
  uuid: filter.uuid(`${K}.uuid`),
  user_uuid: filter.uuid('users.uuid'),
  fingerprint_md5: filter.exact(`${K}.fingerprint_md5`),
  fingerprint_sha256: filter.exact(`${K}.fingerprint_sha256`),
  fingerprint_sha512: filter.exact(`${K}.fingerprint_sha512`),
  is_shared: filter.boolean(`${K}.is_shared`),
  created: filter.after(`${K}.created`, { description: 'created at or after' }),
  created_before: filter.before(`${K}.created`, { description: 'created at or before' }),
  modified: filter.after(`${K}.modified`, { description: 'modified at or after' }),
  modified_before: filter.before(`${K}.modified`, { description: 'modified at or before' }),
}
const ordering = orderedBy({ name: `${K}.name` }, 'name')
const fields = Object.keys(s.SshKeySchema.properties)

export const sshKeys = defineResource({
  path: s.PATH,
  noun: 'SSH key',
  record: s.SshKeySchema,
  visibility: svc.visibility,
  list: { filters, ordering, run: (c) => svc.listKeys(c.ctx, c.scope, c.listing, c.base, c.page) },
  retrieve: { run: (c) => svc.getKey(c.ctx, c.actor, c.uuid, c.base) },
  create: { body: s.SshKeyCreateBody, run: (c) => svc.createKey(c.ctx, c.actor, c.body, c.base) },
  destroy: { run: (c) => svc.deleteKey(c.ctx, c.actor, c.uuid) },
})

const providerKeys = actionList({ fields, filters, ordering })

/** The keys of a service provider's users, on the provider's path. */
export const serviceProviderKeys = defineResource({
  path: 'marketplace-service-providers',
  noun: 'service provider',
  record: s.SshKeySchema,
  actions: [
    defineAction({
      name: 'keys',
      method: 'GET',
      summary: "List the public SSH keys of the users of the provider's resources",
      query: providerKeys.query,
      response: Type.Array(Type.Partial(s.SshKeySchema)),
      run: (c) =>
        svc.listProviderKeys(
          c.ctx,
          c.actor,
          c.uuid,
          providerKeys.listing(c.request),
          c.base,
          pager(c.request, c.reply, fields),
        ),
    }),
  ],
})

export const sshKeysRoutes = resourceRoutes([sshKeys, serviceProviderKeys])
