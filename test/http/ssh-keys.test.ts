// SSH keys: a user's own public keys with their fingerprints (as ssh-keygen prints them), and the
// keys of the users of a service provider's resources.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import { grant, makeCustomer, makeProject, makeUser } from '../support/fixtures.js'
import {
  makeOffering,
  makeOfferingManager,
  makeResource,
  makeServiceProvider,
  providerGraph,
} from '../support/catalog-fixtures.js'

// Made with ssh-keygen; their fingerprints are ssh-keygen's.
const ED25519 =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDXdfpu1exevZTxz/b4+ECblTgZGandW7yStuEctNvhT alice@example.org'
const RSA =
  'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQCzRaCDLHuCj9V4Yb/ri9b29w6AbBRWNcRwiob3s2cKF1WBAPrb75XPLSqNtwfyLML76maMSnJi9ohnt5vbXA9ooTS2z04AerBWlZ7pqQ/onL1oWiTpow8pxpyJ/Ve+MdgPgGi8yb123mq2WVaEqKn2P7zUT6bdrHDA2bzLPJdi3tOlmpNEBZ5E2aKypgYSduXcua23xoZZW/xDdupgGUhywKVhtmS2m4EuvpVNsH0W7NV7hO4tYMWZYbgwFqCQgh6kNeOFJj5ZWXxBIuDnFUI2YU90CHETuIAiS/boQaeLo+XBkWbu6zxhs9DOeWvTViSYdQ9B0Qchm8+wIQOpIz19 bob'
const ECDSA =
  'ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBOyat1IeATo/1FptrfuLB3hd3FQx15HOJNS/Py0Q5dhrzwopcavZjgTwxBuxhb+A1WvEo3cXPHZx9ie+h9t7VfI= carol'

const K = '/api/keys/'

const t = sharedTestApp(async (t) => ({
  staff: await makeUser(t.ctx, { staff: true }),
  support: await makeUser(t.ctx, { support: true }),
}))

describe('a user keeps its public keys', () => {
  test('create answers the key with ssh-keygen fingerprints and its type', async () => {
    const alice = await makeUser(t.ctx)
    const r = await client(t.app, alice.token).post(K, { name: ' laptop ', public_key: `  ${ED25519}\n` })
    assert.equal(r.status, 201, r.text)
    assert.deepEqual(r.body, {
      url: `http://localhost:80${K}${r.body.uuid}/`,
      uuid: r.body.uuid,
      name: 'laptop',
      public_key: ED25519,
      fingerprint_md5: '9e:0b:30:71:cf:25:5b:c1:3f:6b:24:33:34:69:e4:38',
      fingerprint_sha256: 'SHA256:yUEzYctLAXuLCCJYyXWEqXi7zIEQksRl2GHz2EbYL+Q',
      fingerprint_sha512:
        'SHA512:sb1DigZ9dSZv33IQzAFMnkKZ+uU8i57aWmeWV5wcmy00V/4ZzgGL2scDxZl2EQKbk7hXSYRaBLE13/NTeLiyqA',
      user_uuid: alice.uuid,
      is_shared: false,
      type: 'ssh-ed25519',
    })
    const rsa = await client(t.app, alice.token).post(K, { name: 'rsa', public_key: RSA })
    assert.equal(rsa.body.type, 'ssh-rsa')
    assert.equal(rsa.body.fingerprint_sha256, 'SHA256:gNsMh/U1zelOv9zUwluAwbz6JuzeUevzP1Je04pGyoo')
    const ec = await client(t.app, alice.token).post(K, { name: 'ec', public_key: ECDSA })
    assert.equal(ec.body.fingerprint_md5, '5a:72:99:24:22:5c:78:35:bc:c3:0c:f5:48:5e:fd:b1')
  })

  test('malformed keys, a second line and a name used twice are 400 on their field', async () => {
    const bob = await makeUser(t.ctx)
    const as = client(t.app, bob.token)
    for (const bad of [
      'hello world',
      'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDDURXDP5 x',
      'ssh-ed25519 !!!',
      '',
    ]) {
      const r = await as.post(K, { name: 'k', public_key: bad })
      assert.equal(r.status, 400, bad)
      assert.deepEqual(r.body, { public_key: ['Invalid SSH public key.'] })
    }
    const two = await as.post(K, { name: 'k', public_key: `${ED25519}\n${RSA}` })
    assert.deepEqual(two.body, { public_key: ['Key is not valid: it should be single line.'] })
    assert.equal((await as.post(K, { name: 'k', public_key: ED25519 })).status, 201)
    const dup = await as.post(K, { name: 'k', public_key: RSA })
    assert.equal(dup.status, 400)
    assert.deepEqual(dup.body, { name: ['This field must be unique.'] })
    assert.equal((await as.post(K, { name: 'k' })).status, 400)
  })

  test('a user sees its own keys and the shared ones; staff and support all; only owner or staff delete', async () => {
    const carol = await makeUser(t.ctx)
    const dave = await makeUser(t.ctx)
    const own = (await client(t.app, carol.token).post(K, { name: 'c', public_key: ECDSA })).body
    const shared = (await client(t.app, dave.token).post(K, { name: 'shared', public_key: RSA })).body
    await t.ctx.db.updateTable('ssh_keys').set({ is_shared: 1 }).where('uuid', '=', shared.uuid).execute()
    const listed = await client(t.app, carol.token).get(`${K}?page_size=300`)
    const uuids = listed.body.map((k: { uuid: string }) => k.uuid)
    assert.ok(uuids.includes(own.uuid) && uuids.includes(shared.uuid))
    assert.ok(
      listed.body.every(
        (k: { user_uuid: string; is_shared: boolean }) => k.user_uuid === carol.uuid || k.is_shared,
      ),
    )
    assert.equal((await client(t.app, dave.token).get(`${K}${own.uuid}/`)).status, 404)
    assert.equal((await client(t.app, t.support.token).get(`${K}${own.uuid}/`)).status, 200)
    const mine = await client(t.app, carol.token).get(`${K}?user_uuid=${carol.uuid}&name_exact=c`)
    assert.deepEqual(
      mine.body.map((k: { uuid: string }) => k.uuid),
      [own.uuid],
    )
    const byFp = await client(t.app, t.staff.token).get(
      `${K}?fingerprint_sha256=${encodeURIComponent(own.fingerprint_sha256)}`,
    )
    assert.ok(byFp.body.some((k: { uuid: string }) => k.uuid === own.uuid))
    // A shared key: only staff delete it, even its owner may not.
    const refused = await client(t.app, dave.token).delete(`${K}${shared.uuid}/`)
    assert.equal(refused.status, 403)
    assert.deepEqual(refused.body, {
      detail: 'Only staff users are allowed to delete shared SSH public key.',
    })
    assert.equal((await client(t.app, t.support.token).delete(`${K}${own.uuid}/`)).status, 403)
    assert.equal((await client(t.app, carol.token).delete(`${K}${own.uuid}/`)).status, 204)
    assert.equal((await client(t.app, t.staff.token).delete(`${K}${shared.uuid}/`)).status, 204)
    assert.equal((await client(t.app, carol.token).put(`${K}${own.uuid}/`, {})).status, 405)
  })
})

describe("a service provider's users' keys", () => {
  test("the provider side reads the keys of its resources' users; others may not", async () => {
    const pg = providerGraph(t.ctx)
    const providerCustomer = await pg.customer()
    const sp = (
      await client(t.app, t.staff.token).get(
        `/api/marketplace-service-providers/?customer_uuid=${providerCustomer.uuid}`,
      )
    ).body[0]
    const offering = await makeOffering(t.ctx, providerCustomer, { type: 'Marketplace.Slurm' })
    const consumer = await makeCustomer(t.ctx)
    const project = await makeProject(t.ctx, consumer)
    const gone = await makeProject(t.ctx, consumer)
    await makeResource(t.ctx, offering, project)
    await makeResource(t.ctx, offering, gone, { state: 'Terminated' })
    const member = await makeUser(t.ctx)
    const former = await makeUser(t.ctx)
    const stranger = await makeUser(t.ctx)
    await grant(t.ctx, member, 'PROJECT.MEMBER', { type: 'project', id: project.id })
    await grant(t.ctx, former, 'PROJECT.MEMBER', { type: 'project', id: gone.id })
    const keyOf = async (u: { token: string }, public_key: string) =>
      (await client(t.app, u.token).post(K, { name: 'k', public_key })).body.uuid as string
    const memberKey = await keyOf(member, ED25519)
    await keyOf(former, RSA)
    await keyOf(stranger, ECDSA)
    const url = `/api/marketplace-service-providers/${sp.uuid}/keys/`
    const manager = await makeOfferingManager(t.ctx, offering)
    for (const u of [await pg.owner(), await pg.support(), manager, t.staff]) {
      const r = await client(t.app, u.token).get(url)
      assert.equal(r.status, 200, r.text)
      assert.deepEqual(
        r.body.map((k: { uuid: string }) => k.uuid),
        [memberKey],
      )
      assert.equal(r.headers['x-result-count'], '1')
    }
    const fields = await client(t.app, t.staff.token).get(`${url}?field=uuid&field=public_key`)
    assert.deepEqual(fields.body, [{ uuid: memberKey, public_key: ED25519 }])
    assert.deepEqual((await client(t.app, t.staff.token).get(`${url}?user_uuid=${stranger.uuid}`)).body, [])
    assert.equal((await client(t.app, member.token).get(url)).status, 403)
    const other = await makeCustomer(t.ctx)
    const otherOwner = await makeUser(t.ctx)
    await grant(t.ctx, otherOwner, 'CUSTOMER.OWNER', { type: 'customer', id: other.id })
    assert.equal((await client(t.app, otherOwner.token).get(url)).status, 403)
    assert.equal(
      (await client(t.app, t.staff.token).get(`/api/marketplace-service-providers/${other.uuid}/keys/`))
        .status,
      404,
    )
    await makeServiceProvider(t.ctx, other)
    assert.equal((await client(t.app, t.staff.token).get(`${url}?created=nope`)).status, 400)
  })
})
