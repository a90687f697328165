// A request's own transaction: every statement the request runs, through any handle of the
// database, goes into one transaction that the request commits or rolls back at its end. A
// transaction a service opens inside it (`db.transaction()`) becomes a savepoint of it, so its
// rollback still undoes only its own work. Used by requests carrying an Idempotency-Key
// (src/http/idempotency.ts), whose stored answer must commit with the request's writes.
//
// The scope travels with the request's asynchronous work (AsyncLocalStorage): work the request
// starts is inside it, timers and other requests are not. Each driver keeps its requests' scopes
// to itself, so two databases in one process never share one.
import { AsyncLocalStorage } from 'node:async_hooks'

export interface RequestTransaction {
  /** Runs `fn`, and everything it starts, inside the transaction. */
  run<T>(fn: () => T): T
  /** Commits everything the request wrote; the transaction is over (rolled back on failure). */
  commit(): Promise<void>
  /** Undoes everything the request wrote; does nothing once the transaction is over. */
  rollback(): Promise<void>
  /** Until commit or rollback. */
  readonly open: boolean
}

/** What a driver keeps of one request's transaction while the request runs. */
export interface RequestScope {
  /** The driver the transaction belongs to. */
  readonly owner: object
  /** Transactions opened inside it, one at a time (their savepoints must nest). */
  readonly nested: Lock
  /** Names the savepoints of the transactions opened inside it. */
  savepoints: number
  /** The transaction is over: work the request left running uses the database as any other. */
  closed: boolean
}

const scopes = new AsyncLocalStorage<RequestScope>()
/** Scopes not yet closed, in this process. */
let open = 0

/** The scope of the request running now, when it belongs to `owner` and is still open. */
export function currentScope(owner: object): RequestScope | undefined {
  const scope = scopes.getStore()
  return scope?.owner === owner && !scope.closed ? scope : undefined
}

export function newScope(owner: object): RequestScope {
  open++
  return { owner, nested: new Lock(), savepoints: 0, closed: false }
}

/**
 * Ends a scope. With none left open, the storage is disabled: on Node 20, while an
 * AsyncLocalStorage is in use every promise of the process pays for carrying its context (a
 * loop of awaits ran at half speed), so requests without a scope pay only while others have one.
 * The next `runInScope` enables it again.
 */
export function closeScope(scope: RequestScope): void {
  if (scope.closed) return
  scope.closed = true
  if (--open === 0) scopes.disable()
}

export function runInScope<T>(scope: RequestScope, fn: () => T): T {
  return scopes.run(scope, fn)
}

/** A first-come, first-served lock. */
export class Lock {
  #held = false
  #waiting: (() => void)[] = []

  acquire(): Promise<void> {
    if (!this.#held) {
      this.#held = true
      return Promise.resolve()
    }
    return new Promise((resolve) => this.#waiting.push(resolve))
  }

  release(): void {
    const next = this.#waiting.shift()
    if (next) next()
    else this.#held = false
  }
}
