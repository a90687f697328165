import { before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'
import { client } from '../support/client.js'
import {
  grant,
  makeCustomer,
  makeProject,
  makeUser,
  type Ref,
  type UserRef,
  uniqueName,
  withStaff,
} from '../support/fixtures.js'

const t = sharedTestApp(withStaff)

const BASE = '/api/payment-profiles/'

async function createProfile(org: Ref, extra: Record<string, unknown> = {}) {
  const r = await client(t.app, t.staff.token).post(BASE, {
    name: uniqueName('Profile'),
    organization: org.url,
    payment_type: 'invoices',
    ...extra,
  })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body
}

async function activeUuids(org: Ref): Promise<string[]> {
  const r = await client(t.app, t.staff.token).get(`${BASE}?organization_uuid=${org.uuid}&is_active=true`)
  return r.body.map((p: { uuid: string }) => p.uuid)
}

describe('payment profile records', () => {
  test('staff creates a profile and gets the full record', async () => {
    const org = await makeCustomer(t.ctx)
    const r = await client(t.app, t.staff.token).post(BASE, {
      name: 'Contract 2026',
      organization: org.url,
      payment_type: 'fixed_price',
      attributes: { end_date: '2026-12-31', agreement_number: 'AG-1', contract_sum: 1000 },
      unknown_field: 'ignored',
    })
    assert.equal(r.status, 201)
    assert.deepEqual(r.body, {
      uuid: r.body.uuid,
      url: `http://localhost:80/api/payment-profiles/${r.body.uuid}/`,
      name: 'Contract 2026',
      organization_uuid: org.uuid,
      organization: `http://localhost:80/api/customers/${org.uuid}/`,
      attributes: { end_date: '2026-12-31', agreement_number: 'AG-1', contract_sum: 1000 },
      payment_type: 'fixed_price',
      payment_type_display: 'Fixed-price contract',
      is_active: false,
    })
    const got = await client(t.app, t.staff.token).get(`${BASE}${r.body.uuid}/`)
    assert.equal(got.status, 200)
    assert.deepEqual(got.body, r.body)
  })

  test('payment_type_display labels every payment type', async () => {
    const org = await makeCustomer(t.ctx)
    const labels: Record<string, string> = {
      fixed_price: 'Fixed-price contract',
      invoices: 'Monthly invoices',
      payment_gw_monthly: 'Payment gateways (monthly)',
    }
    for (const [type, label] of Object.entries(labels)) {
      const p = await createProfile(org, { payment_type: type })
      assert.equal(p.payment_type_display, label)
    }
  })

  test('name, organization and payment_type are required; unknown payment types are refused', async () => {
    const org = await makeCustomer(t.ctx)
    const as = client(t.app, t.staff.token)
    const missing = await as.post(BASE, {})
    assert.equal(missing.status, 400)
    assert.deepEqual(missing.body, {
      name: ['This field is required.'],
      organization: ['This field is required.'],
      payment_type: ['This field is required.'],
    })
    const badType = await as.post(BASE, { name: 'x', organization: org.url, payment_type: 'cash' })
    assert.equal(badType.status, 400)
    assert.deepEqual(badType.body, { payment_type: ['"cash" is not a valid choice.'] })
    const badOrg = await as.post(BASE, {
      name: 'x',
      organization: `http://localhost/api/projects/${org.uuid}/`,
      payment_type: 'invoices',
    })
    assert.equal(badOrg.status, 400)
    assert.deepEqual(badOrg.body, { organization: ['Invalid hyperlink - Incorrect URL match.'] })
    const unknownOrg = await as.post(BASE, {
      name: 'x',
      organization: 'http://localhost/api/customers/00000000-0000-4000-8000-000000000000/',
      payment_type: 'invoices',
    })
    assert.equal(unknownOrg.status, 400)
    assert.deepEqual(unknownOrg.body, { organization: ['Invalid hyperlink - Object does not exist.'] })
  })

  test('attributes are validated and errors nest under attributes', async () => {
    const org = await makeCustomer(t.ctx)
    const as = client(t.app, t.staff.token)
    const withAttributes = (attributes: unknown) =>
      as.post(BASE, { name: 'x', organization: org.url, payment_type: 'invoices', attributes })
    const bad = await withAttributes({
      end_date: '2026-02-30',
      agreement_number: ['x'],
      contract_sum: '12.5',
    })
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, {
      attributes: {
        end_date: ['Date has wrong format. Use one of these formats instead: YYYY-MM-DD.'],
        agreement_number: ['Not a valid string.'],
        contract_sum: ['A valid integer is required.'],
      },
    })
    const nullDate = await withAttributes({ end_date: null, agreement_number: 'AG-2' })
    assert.equal(nullDate.status, 400)
    assert.deepEqual(nullDate.body, { attributes: { end_date: ['This field may not be null.'] } })
    const notDate = await withAttributes({ end_date: '31.12.2026' })
    assert.equal(notDate.status, 400)
    assert.ok(notDate.body.attributes.end_date)
    const notObject = await withAttributes('x')
    assert.equal(notObject.status, 400)
    assert.deepEqual(notObject.body, { attributes: ['Expected a dictionary of items.'] })
  })

  test('an integer-valued string contract_sum is accepted and stored as an integer', async () => {
    const org = await makeCustomer(t.ctx)
    const p = await createProfile(org, { attributes: { contract_sum: '2500', extra: 'kept' } })
    assert.deepEqual(p.attributes, { contract_sum: 2500, extra: 'kept' })
  })

  test('PUT replaces the writable set, PATCH changes a subset, DELETE removes', async () => {
    const org = await makeCustomer(t.ctx)
    const other = await makeCustomer(t.ctx)
    const p = await createProfile(org)
    const as = client(t.app, t.staff.token)
    const put = await as.put(`${BASE}${p.uuid}/`, {
      name: 'Renamed',
      organization: other.url,
      payment_type: 'payment_gw_monthly',
      attributes: { agreement_number: 'B-2' },
    })
    assert.equal(put.status, 200)
    assert.equal(put.body.name, 'Renamed')
    assert.equal(put.body.organization_uuid, other.uuid)
    assert.equal(put.body.payment_type, 'payment_gw_monthly')
    assert.deepEqual(put.body.attributes, { agreement_number: 'B-2' })
    const putPartial = await as.put(`${BASE}${p.uuid}/`, { name: 'only name' })
    assert.equal(putPartial.status, 400)
    const patch = await as.patch(`${BASE}${p.uuid}/`, { attributes: { contract_sum: 'x' } })
    assert.equal(patch.status, 400)
    assert.deepEqual(patch.body, { attributes: { contract_sum: ['A valid integer is required.'] } })
    const patch2 = await as.patch(`${BASE}${p.uuid}/`, { name: 'Patched' })
    assert.equal(patch2.status, 200)
    assert.equal(patch2.body.name, 'Patched')
    assert.equal(patch2.body.payment_type, 'payment_gw_monthly')
    const del = await as.delete(`${BASE}${p.uuid}/`)
    assert.equal(del.status, 204)
    assert.equal(del.text, '')
    assert.equal((await as.get(`${BASE}${p.uuid}/`)).status, 404)
  })

  test('an unknown or malformed uuid is 404 with the model name', async () => {
    const as = client(t.app, t.staff.token)
    const r = await as.get(`${BASE}not-a-uuid/`)
    assert.equal(r.status, 404)
    assert.deepEqual(r.body, { detail: 'No PaymentProfile matches the given query.' })
    assert.equal((await as.get(`${BASE}00000000-0000-4000-8000-000000000000/`)).status, 404)
  })
})

describe('who may read and write payment profiles', () => {
  let org: Ref
  let active: { uuid: string }
  let inactive: { uuid: string }
  let owner: UserRef
  before(async () => {
    org = await makeCustomer(t.ctx)
    active = await createProfile(org, { is_active: true })
    inactive = await createProfile(org)
    owner = await makeUser(t.ctx)
    await grant(t.ctx, owner, 'CUSTOMER.OWNER', { type: 'customer', id: org.id })
  })

  test('anonymous callers get 401', async () => {
    assert.equal((await client(t.app).get(BASE)).status, 401)
  })

  test('owners of the organization see only its active profile', async () => {
    const r = await client(t.app, owner.token).get(BASE)
    assert.equal(r.status, 200)
    assert.deepEqual(
      r.body.map((p: { uuid: string }) => p.uuid),
      [active.uuid],
    )
    assert.equal((await client(t.app, owner.token).get(`${BASE}${active.uuid}/`)).status, 200)
    assert.equal((await client(t.app, owner.token).get(`${BASE}${inactive.uuid}/`)).status, 404)
  })

  test('project members, other organizations and outsiders see nothing', async () => {
    const project = await makeProject(t.ctx, org)
    const member = await makeUser(t.ctx)
    await grant(t.ctx, member, 'PROJECT.ADMIN', { type: 'project', id: project.id })
    const outsider = await makeUser(t.ctx)
    for (const u of [member, outsider]) {
      const r = await client(t.app, u.token).get(BASE)
      assert.equal(r.status, 200)
      assert.deepEqual(r.body, [])
      assert.equal((await client(t.app, u.token).get(`${BASE}${active.uuid}/`)).status, 404)
    }
  })

  test('support sees active and inactive profiles but cannot write', async () => {
    const support = await makeUser(t.ctx, { support: true })
    const r = await client(t.app, support.token).get(`${BASE}?organization_uuid=${org.uuid}`)
    assert.equal(r.body.length, 2)
    const as = client(t.app, support.token)
    assert.equal(
      (await as.post(BASE, { name: 'x', organization: org.url, payment_type: 'invoices' })).status,
      403,
    )
    assert.equal((await as.post(`${BASE}${inactive.uuid}/enable/`)).status, 403)
  })

  test('create, update, delete and enable are staff only (403 otherwise, before the lookup)', async () => {
    const as = client(t.app, owner.token)
    const forbidden = { detail: 'You do not have permission to perform this action.' }
    const c = await as.post(BASE, { name: 'x', organization: org.url, payment_type: 'invoices' })
    assert.equal(c.status, 403)
    assert.deepEqual(c.body, forbidden)
    assert.equal((await as.patch(`${BASE}${active.uuid}/`, { name: 'y' })).status, 403)
    assert.equal(
      (await as.put(`${BASE}${active.uuid}/`, { name: 'y', organization: org.url, payment_type: 'invoices' }))
        .status,
      403,
    )
    assert.equal((await as.delete(`${BASE}${active.uuid}/`)).status, 403)
    assert.equal((await as.post(`${BASE}${inactive.uuid}/enable/`)).status, 403)
    assert.equal((await as.post(`${BASE}00000000-0000-4000-8000-000000000000/enable/`)).status, 403)
    assert.deepEqual(await activeUuids(org), [active.uuid])
  })
})

describe('one active profile per organization', () => {
  test("enable answers 200 with no body and deactivates the organization's other profiles only", async () => {
    const org = await makeCustomer(t.ctx)
    const otherOrg = await makeCustomer(t.ctx)
    const a = await createProfile(org, { is_active: true })
    const b = await createProfile(org)
    const c = await createProfile(org)
    const elsewhere = await createProfile(otherOrg, { is_active: true })
    const r = await client(t.app, t.staff.token).post(`${BASE}${b.uuid}/enable/`)
    assert.equal(r.status, 200)
    assert.equal(r.text, '')
    assert.deepEqual(await activeUuids(org), [b.uuid])
    const got = await client(t.app, t.staff.token).get(`${BASE}${a.uuid}/`)
    assert.equal(got.body.is_active, false)
    assert.equal((await client(t.app, t.staff.token).get(`${BASE}${c.uuid}/`)).body.is_active, false)
    assert.deepEqual(await activeUuids(otherOrg), [elsewhere.uuid])
    // Enabling the active one again is harmless.
    assert.equal((await client(t.app, t.staff.token).post(`${BASE}${b.uuid}/enable/`)).status, 200)
    assert.deepEqual(await activeUuids(org), [b.uuid])
  })

  test('creating or updating with is_active true takes over from the active profile', async () => {
    const org = await makeCustomer(t.ctx)
    const a = await createProfile(org, { is_active: true })
    const b = await createProfile(org, { is_active: true })
    assert.deepEqual(await activeUuids(org), [b.uuid])
    const patched = await client(t.app, t.staff.token).patch(`${BASE}${a.uuid}/`, { is_active: true })
    assert.equal(patched.status, 200)
    assert.equal(patched.body.is_active, true)
    assert.deepEqual(await activeUuids(org), [a.uuid])
    const off = await client(t.app, t.staff.token).patch(`${BASE}${a.uuid}/`, { is_active: false })
    assert.equal(off.body.is_active, false)
    assert.deepEqual(await activeUuids(org), [])
  })

  test('moving an active profile to another organization keeps that organization at one active', async () => {
    const org = await makeCustomer(t.ctx)
    const target = await makeCustomer(t.ctx)
    const moving = await createProfile(org, { is_active: true })
    const resident = await createProfile(target, { is_active: true })
    const r = await client(t.app, t.staff.token).patch(`${BASE}${moving.uuid}/`, { organization: target.url })
    assert.equal(r.status, 200)
    assert.equal(r.body.is_active, true)
    assert.deepEqual(await activeUuids(target), [moving.uuid])
    assert.deepEqual(await activeUuids(org), [])
    assert.equal((await client(t.app, t.staff.token).get(`${BASE}${resident.uuid}/`)).body.is_active, false)
  })

  test('concurrent enables of different profiles leave exactly one active', async () => {
    const org = await makeCustomer(t.ctx)
    const profiles = []
    for (let i = 0; i < 4; i++) profiles.push(await createProfile(org))
    const results = await Promise.all(
      profiles.map((p) => client(t.app, t.staff.token).post(`${BASE}${p.uuid}/enable/`)),
    )
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 200, 200, 200],
    )
    const active = await activeUuids(org)
    assert.equal(active.length, 1)
    assert.ok(profiles.some((p) => p.uuid === active[0]))
  })

  test('the database itself refuses a second active profile of an organization', async () => {
    const org = await makeCustomer(t.ctx)
    await createProfile(org, { is_active: true })
    const now = t.ctx.clock().toISOString()
    await assert.rejects(
      t.ctx.db
        .insertInto('payment_profiles')
        .values({
          uuid: t.ctx.newUuid(),
          name: 'sneaky',
          organization_id: org.id,
          attributes: '{}',
          payment_type: 'invoices',
          is_active: 1,
          created: now,
          modified: now,
        })
        .execute(),
    )
  })
})

describe('payment profile list filters and ordering', () => {
  let org: Ref
  let other: Ref
  let p1: { uuid: string }
  let p2: { uuid: string }
  let p3: { uuid: string }
  before(async () => {
    org = await makeCustomer(t.ctx)
    other = await makeCustomer(t.ctx)
    p1 = await createProfile(org, { name: 'B profile', payment_type: 'invoices', is_active: true })
    p2 = await createProfile(org, { name: 'A profile', payment_type: 'fixed_price' })
    p3 = await createProfile(other, { name: 'C profile', payment_type: 'payment_gw_monthly' })
  })
  const uuids = async (qs: string) => {
    const r = await client(t.app, t.staff.token).get(`${BASE}?${qs}`)
    assert.equal(r.status, 200, JSON.stringify(r.body))
    return r.body.map((p: { uuid: string }) => p.uuid)
  }

  test('organization_uuid and organization (URL) select one organization', async () => {
    assert.deepEqual(await uuids(`organization_uuid=${org.uuid}`), [p2.uuid, p1.uuid])
    assert.deepEqual(await uuids(`organization=${encodeURIComponent(other.url)}`), [p3.uuid])
    assert.deepEqual(await uuids(`organization=/api/customers/${other.uuid}/`), [p3.uuid])
  })

  test('an organization URL of another kind gives an empty list, a bad uuid 400', async () => {
    assert.deepEqual(
      await uuids(`organization=${encodeURIComponent(`http://localhost/api/projects/${org.uuid}/`)}`),
      [],
    )
    assert.deepEqual(await uuids('organization=garbage'), [])
    const r = await client(t.app, t.staff.token).get(`${BASE}?organization_uuid=nope`)
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { organization_uuid: ['Enter a valid UUID.'] })
  })

  test('payment_type is repeatable and validated', async () => {
    const scope = `organization_uuid=${org.uuid}`
    assert.deepEqual(await uuids(`${scope}&payment_type=invoices`), [p1.uuid])
    const both = await uuids('payment_type=invoices&payment_type=payment_gw_monthly&o=name')
    assert.ok(both.includes(p1.uuid) && both.includes(p3.uuid) && !both.includes(p2.uuid))
    const r = await client(t.app, t.staff.token).get(`${BASE}?payment_type=cash`)
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, {
      payment_type: ['Select a valid choice. cash is not one of the available choices.'],
    })
  })

  test('is_active true/false filters; other values are ignored', async () => {
    assert.deepEqual(await uuids(`organization_uuid=${org.uuid}&is_active=true`), [p1.uuid])
    assert.deepEqual(await uuids(`organization_uuid=${org.uuid}&is_active=false`), [p2.uuid])
    assert.deepEqual(await uuids(`organization_uuid=${org.uuid}&is_active=maybe`), [p2.uuid, p1.uuid])
  })

  test('o orders by name, payment_type or is_active; unknown names are 400', async () => {
    const scope = `organization_uuid=${org.uuid}`
    assert.deepEqual(await uuids(`${scope}&o=-name`), [p1.uuid, p2.uuid])
    assert.deepEqual(await uuids(`${scope}&o=payment_type`), [p2.uuid, p1.uuid])
    assert.deepEqual(await uuids(`${scope}&o=-is_active`), [p1.uuid, p2.uuid])
    assert.deepEqual(await uuids(`${scope}&o=is_active`), [p2.uuid, p1.uuid])
    const r = await client(t.app, t.staff.token).get(`${BASE}?o=created`)
    assert.equal(r.status, 400)
    assert.deepEqual(r.body, { o: ['Select a valid choice. created is not one of the available choices.'] })
  })

  test('field limits the keys and lists carry the count header', async () => {
    const r = await client(t.app, t.staff.token).get(
      `${BASE}?organization_uuid=${org.uuid}&field=name&field=is_active`,
    )
    assert.deepEqual(r.body, [
      { name: 'A profile', is_active: false },
      { name: 'B profile', is_active: true },
    ])
    assert.equal(r.headers['x-result-count'], '2')
  })
})
