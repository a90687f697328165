// Users' public SSH keys (/api/keys/), and the keys of a service provider's users.
import { Type, type Static } from '@sinclair/typebox'
import { Body, Url, Uuid } from '../../http/schemas.js'

export const PATH = 'keys'

export const SshKeySchema = Type.Object({
  url: Url,
  uuid: Uuid,
  name: Type.String(),
  public_key: Type.String(),
  fingerprint_md5: Type.String(),
  fingerprint_sha256: Type.String(),
  fingerprint_sha512: Type.String(),
  user_uuid: Uuid,
  is_shared: Type.Boolean({ description: 'shown to every user; only staff delete it' }),
  type: Type.String({ description: "the key's algorithm, as its first word says (ssh-ed25519, ssh-rsa…)" }),
})
export type SshKey = Static<typeof SshKeySchema>

export const SshKeyCreateBody = Body({
  name: Type.Optional(Type.String({ maxLength: 150 })),
  public_key: Type.String({ maxLength: 2000, description: 'one line: <type> <base64 key> [comment]' }),
})
export type SshKeyCreate = Static<typeof SshKeyCreateBody>
