import assert from 'node:assert/strict'
import { answer } from './client.js'
import { userWith, type Journey } from './world.js'

export const paymentProfileJourneys: Journey[] = [
  {
    name: "staff record an organization's contract as a payment profile and enable it; the organization's owner then sees it as the active profile",
    async run(w) {
      const staff = await w.user({ staff: true })
      const organization = await w.customer()
      const owner = await userWith(w, 'CUSTOMER.OWNER', organization)
      const billing = w.api(staff)

      const profile = await answer(
        201,
        billing.POST('/api/payment-profiles/', {
          body: {
            name: 'Framework agreement 2026',
            organization: organization.url,
            payment_type: 'fixed_price',
            is_active: false,
            attributes: { end_date: '2026-12-31', agreement_number: 'FA-2026-04', contract_sum: 50000 },
          },
        }),
      )
      assert.equal(profile.organization_uuid, organization.uuid)
      assert.equal(profile.is_active, false)
      const path = { params: { path: { uuid: profile.uuid! } } }
      const mine = w.api(owner)
      const before = await answer(
        200,
        mine.GET('/api/payment-profiles/', { params: { query: { organization_uuid: organization.uuid } } }),
      )
      assert.deepEqual(before, [], 'an inactive profile is not shown to the organization')

      await answer(200, billing.POST('/api/payment-profiles/{uuid}/enable/', path))
      const enabled = await answer(200, billing.GET('/api/payment-profiles/{uuid}/', path))
      assert.equal(enabled.is_active, true)
      assert.deepEqual(enabled.attributes, {
        end_date: '2026-12-31',
        agreement_number: 'FA-2026-04',
        contract_sum: 50000,
      })
      const active = await answer(
        200,
        mine.GET('/api/payment-profiles/', {
          params: { query: { organization_uuid: organization.uuid, is_active: true } },
        }),
      )
      assert.deepEqual(
        active.map((p) => [p.uuid, p.payment_type]),
        [[profile.uuid, 'fixed_price']],
      )
    },
  },
]
