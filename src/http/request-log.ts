// The request's logger (request.log), made only when something is logged. Fastify gives every
// request a child of the server's logger bound to its request id; pino builds that child (its
// bindings serialized to JSON, a new prototype) on every request, even when the configured level
// logs nothing for it, as at LOG_LEVEL=warn for a request that succeeds.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino'

type ChildLoggerFactory = NonNullable<FastifyServerOptions['childLoggerFactory']>

const LEVELS: Level[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace']

/**
 * A child logger that calls pino's `child` on its first line at an enabled level: the same
 * lines, with the same bindings (the request id), as the child it stands for. The level is the
 * parent's (a route with a level of its own, or serializers of its own, gets pino's child at once).
 */
export class LazyChildLogger implements FastifyBaseLogger {
  #child: Logger | null = null
  constructor(
    private readonly parent: Logger,
    private readonly childBindings: Bindings,
  ) {}

  private get real(): Logger {
    return (this.#child ??= this.parent.child(this.childBindings))
  }

  get level(): string {
    return this.#child ? this.#child.level : this.parent.level
  }

  set level(level: string) {
    this.real.level = level
  }

  private enabled(level: Level): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level)
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args)
  }
  error(...args: unknown[]): void {
    this.write('error', args)
  }
  warn(...args: unknown[]): void {
    this.write('warn', args)
  }
  info(...args: unknown[]): void {
    this.write('info', args)
  }
  debug(...args: unknown[]): void {
    this.write('debug', args)
  }
  trace(...args: unknown[]): void {
    this.write('trace', args)
  }
  silent(): void {}

  private write(level: Level, args: unknown[]): void {
    if (!this.enabled(level)) return
    // pino's log functions read `this`: called as methods of the child.
    this.real[level](...(args as [unknown]))
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options)
  }

  isLevelEnabled(level: string): boolean {
    return LEVELS.includes(level as Level) ? this.enabled(level as Level) : false
  }
}

/** Fastify's childLoggerFactory making LazyChildLogger where it can stand for pino's child. */
export const lazyChildLoggerFactory: ChildLoggerFactory = function (logger, bindings, options) {
  const parent = logger as unknown as Logger
  if (options.level || options.serializers || typeof parent.isLevelEnabled !== 'function') {
    return logger.child(bindings, options)
  }
  return new LazyChildLogger(parent, bindings)
}
