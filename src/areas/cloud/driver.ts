// Cloud backend drivers. Each cloud kind (cloudA, cloudB) declares its own driver interface; this
// file holds the registry (kind + name → factory), chosen per service settings by
// `options.driver` (default `emulator`), and the emulator base every shipped driver builds on.
//
// The emulator keeps its backend state in the database (cloud_emulator_objects and
// cloud_emulator_counters), so it survives restarts and is shared by every process. Its answers
// are deterministic: ids and addresses come from per-settings counters, never from randomness.
// Options of the service settings steer it:
//   fail_next: ["create_public_ip", ...]  the next call of each named operation fails (consumed)
//   fail_next: 2                          the next 2 operations fail, whatever they are (consumed)
//   fail_all: true | ["op", ...]          every operation (or every named one) fails
//   slow_ms: 250                          every operation takes this long first
import type { AppContext } from '../../context.js'
import { parseJson } from '../../db/values.js'
import { emulatorRepository } from './emulator-repository.js'

export const CLOUD_KINDS = ['cloudA', 'cloudB'] as const
export type CloudKind = (typeof CLOUD_KINDS)[number]

export const DEFAULT_DRIVER = 'emulator'

/** The service settings a driver is built for. */
export interface SettingsInfo {
  id: number
  uuid: string
  name: string
  type: string
  options: Record<string, unknown>
}

export interface DriverCall {
  ctx: AppContext
  settings: SettingsInfo
}

/** A failure reported by a backend: its message becomes the resource's error_message. */
export class BackendError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'BackendError'
  }
}

export type DriverFactory<D> = (call: DriverCall) => D

const registry = new Map<CloudKind, Map<string, DriverFactory<unknown>>>()

/** Registers a driver of a cloud kind under a name (at module load of the area that ships it). */
export function registerDriver<D>(kind: CloudKind, name: string, factory: DriverFactory<D>): void {
  let byName = registry.get(kind)
  if (!byName) registry.set(kind, (byName = new Map()))
  byName.set(name, factory)
}

/** Names of the drivers registered for a kind, sorted. */
export function driverNames(kind: string): string[] {
  return [...(registry.get(kind as CloudKind)?.keys() ?? [])].sort()
}

export function driverName(options: Record<string, unknown>): string {
  return typeof options.driver === 'string' && options.driver ? options.driver : DEFAULT_DRIVER
}

/** The driver the settings select. An unknown name is a backend error (the job records it). */
export function driverFor<D>(kind: CloudKind, call: DriverCall): D {
  const name = driverName(call.settings.options)
  const factory = registry.get(kind)?.get(name)
  if (!factory) throw new BackendError(`Unknown ${kind} driver "${name}".`)
  return factory(call) as D
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * The emulator's common machinery: failure injection, slowness, deterministic counters and a
 * durable object store scoped to one service settings.
 */
export class EmulatorBase {
  protected readonly ctx: AppContext
  protected readonly settings: SettingsInfo

  constructor(call: DriverCall) {
    this.ctx = call.ctx
    this.settings = call.settings
  }

  protected get repo() {
    return emulatorRepository(this.ctx.db)
  }

  /**
   * Runs before every backend operation: waits `slow_ms`, then fails when `fail_all` or a
   * pending `fail_next` entry says so (consuming that entry). Reads the options afresh, so a
   * change made through the API applies to the next call.
   */
  protected async step(op: string): Promise<void> {
    const options = parseJson<Record<string, unknown>>(
      await this.repo.settingsOptions(this.settings.id),
      this.settings.options,
    )
    const slow = Number(options.slow_ms)
    if (Number.isFinite(slow) && slow > 0) await sleep(Math.min(slow, 60_000))
    const failAll = options.fail_all
    if (failAll === true || (Array.isArray(failAll) && failAll.includes(op))) {
      throw new BackendError(`Emulated failure of ${op}.`)
    }
    if (
      await this.repo.consumeFailNext(this.ctx.dialect, this.settings.id, op, this.ctx.clock().toISOString())
    ) {
      throw new BackendError(`Emulated failure of ${op}.`)
    }
  }

  /** The next value of a per-settings counter, from 1. */
  protected nextNumber(name: string): Promise<number> {
    return this.repo.nextCounter(this.settings.id, name)
  }

  /** A deterministic backend id: `<prefix>-<n>`. */
  protected async nextId(prefix: string): Promise<string> {
    return `${prefix}-${await this.nextNumber(prefix)}`
  }

  /** A new object of `kind`: its id the next `<prefix>-<n>`, `build` makes it, then it is stored. */
  protected async insertObject<T>(
    kind: string,
    prefix: string,
    build: (backendId: string) => T | Promise<T>,
  ): Promise<T> {
    const backendId = await this.nextId(prefix)
    const data = await build(backendId)
    await this.putObject(kind, backendId, data)
    return data
  }

  /** The backend's error for an object it does not have; each emulated cloud may word it its own way. */
  protected missing(what: string, id: string): BackendError {
    return new BackendError(`${what} ${id} could not be found.`)
  }

  /** The object of `kind`, which must exist. */
  protected async must<T>(kind: string, id: string, what: string): Promise<T> {
    const o = await this.getObject<T>(kind, id)
    if (!o) throw this.missing(what, id)
    return o
  }

  /** The operation's step, then the object of `kind` (it must exist) changed and stored again. */
  protected async modify<T>(
    op: string,
    kind: string,
    id: string,
    what: string,
    change: (o: T) => void | Promise<void>,
  ): Promise<T> {
    await this.step(op)
    const o = await this.must<T>(kind, id, what)
    await change(o)
    await this.putObject(kind, id, o)
    return o
  }

  /** The operation's step, then the object of `kind` (it must exist) removed; `before` may refuse. */
  protected async remove<T>(
    op: string,
    kind: string,
    id: string,
    what: string,
    before?: (o: T) => Promise<void>,
  ): Promise<void> {
    await this.step(op)
    const o = await this.must<T>(kind, id, what)
    if (before) await before(o)
    await this.deleteObject(kind, id)
  }

  protected getObject<T>(kind: string, backendId: string): Promise<T | null> {
    return this.repo.getObject<T>(this.settings.id, kind, backendId)
  }

  protected putObject(kind: string, backendId: string, data: unknown): Promise<void> {
    return this.repo.putObject(this.settings.id, kind, backendId, data, this.ctx.clock().toISOString())
  }

  /** Removes an object; false when it did not exist. */
  protected deleteObject(kind: string, backendId: string): Promise<boolean> {
    return this.repo.deleteObject(this.settings.id, kind, backendId)
  }

  protected listObjects<T>(kind: string): Promise<{ backend_id: string; data: T }[]> {
    return this.repo.listObjects<T>(this.settings.id, kind)
  }
}

/** A deterministic IPv4 address for the n-th allocation, from the 198.18.0.0/15 benchmark range. */
export function emulatedIpv4(n: number): string {
  const v = n % 131072
  return `198.${18 + (v >> 16)}.${(v >> 8) & 255}.${v & 255}`
}
