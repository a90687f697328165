import { test } from 'node:test'
import assert from 'node:assert/strict'
import { apiClient } from './client.js'

const UUID = '6f1c2a9e-3b7d-4c55-9e21-0a8b7c6d5e4f'

/** A fetch that answers every request with this JSON body and status. */
function answering(body: unknown, status = 200) {
  return async () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })
}

test('the generated client rejects an answer that breaks the wire contract, naming the operation, pointer and rule', async () => {
  const api = apiClient(
    'http://api.example',
    'token',
    answering({ uuid: UUID, url: `http://api.example/api/marketplace-orders/${UUID}/`, slug: '' }),
  )
  await assert.rejects(
    api.GET('/api/marketplace-orders/{uuid}/', { params: { path: { uuid: UUID } } }),
    /contract: marketplace_orders_retrieve \(GET \/api\/marketplace-orders\/\{uuid\}\/ → 200\): \/slug must match pattern/,
  )
})

test('the generated client passes an answer that keeps the contract', async () => {
  const api = apiClient(
    'http://api.example',
    'token',
    answering({ status: 'Backend resource request has been marked as done.' }),
  )
  const r = await api.POST('/api/backend-resource-requests/{uuid}/set_done/', {
    params: { path: { uuid: UUID } },
  })
  assert.equal(r.response.status, 200)
  assert.equal(r.data?.status, 'Backend resource request has been marked as done.')
})
