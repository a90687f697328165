// Runs the wire-contract check (test/contract/) on every response the app sends in a test. A
// violation makes the app.inject call that received it reject, so the test that made the request
// fails, naming the operation, the JSON pointer, the rule and the value. Violations of answers that
// travelled over a socket are kept and fail the test file when its app closes.
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { AssertionError } from 'node:assert'
import { Contract, formatViolation, type Violation } from '../contract/contract.js'

let shared: Contract | undefined
/** One compiled contract per test process. */
export function contract(): Contract {
  return (shared ??= new Contract())
}

export class ContractWatch {
  private readonly pending = new Map<string, Violation[]>()

  install(app: FastifyInstance): void {
    app.addHook('onSend', async (request, reply, payload) => {
      if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload
      const violations = contract().check({
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        contentType: String(reply.getHeader('content-type') ?? ''),
        body: payload.toString(),
      })
      if (violations.length) this.pending.set(request.id, violations)
      return payload
    })
    const inject = app.inject.bind(app) as (o: InjectOptions | string) => Promise<LightMyRequestResponse>
    ;(app as any).inject = async (opts: InjectOptions | string) => {
      const res = await inject(opts)
      const id = res.headers['x-request-id']
      const found = typeof id === 'string' ? this.pending.get(id) : undefined
      if (found) {
        this.pending.delete(id as string)
        throw new AssertionError({ message: found.map(formatViolation).join('\n') })
      }
      return res
    }
  }

  /** Violations of answers nobody has been told about (requests made over a socket). */
  assertNoneLeft(): void {
    if (!this.pending.size) return
    const all = [...this.pending.values()].flat().map(formatViolation)
    this.pending.clear()
    throw new AssertionError({ message: `responses breaking the wire contract:\n${all.join('\n')}` })
  }
}
