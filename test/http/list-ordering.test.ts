import { test } from 'node:test'
import assert from 'node:assert/strict'
import { sharedTestApp } from '../support/app.js'

const t = sharedTestApp()

// `o` is a parameter of the lists that can be ordered by it, and of no other.
const ORDERED = [
  '/api/marketplace-orders/',
  '/api/backend-resource-requests/',
  '/api/user-group-invitations/',
  '/api/payment-profiles/',
]
const FIXED = [
  '/api/marketplace-offering-estimated-cost-policies/',
  '/api/marketplace-site-agent-services/',
  '/api/support-feedbacks/',
]

test('lists in a fixed order do not declare o; orderable lists do', async () => {
  const doc = (await t.app.inject({ url: '/api/schema/' })).json()
  const names = (path: string): string[] => {
    const op = doc.paths[path]?.get
    assert.ok(op, `GET ${path} is documented`)
    return (op.parameters ?? []).map((p: { name: string }) => p.name)
  }
  for (const path of ORDERED) assert.ok(names(path).includes('o'), `${path} declares o`)
  for (const path of FIXED) {
    const declared = names(path)
    assert.ok(declared.includes('page'), `${path} is a list`)
    assert.ok(!declared.includes('o'), `${path} declares o but has a fixed order`)
  }
})
