// callback_url: where an order's state changes are POSTed, and the guard that keeps those
// requests out of private networks. One rule (`targetProblem`) judges a host and an address: the
// URL's host when an order is created, and at delivery every address the socket may connect to,
// inside the connection's own name lookup, then the address it did connect to. A name that
// resolves to a public address when looked at and to a private one when connected to (DNS
// rebinding) is therefore refused at the connection, before anything reaches the private address.
import { isIP } from 'node:net'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import { Agent, buildConnector, request } from 'undici'
import type { Config } from '../../config.js'
import type { LookupHost } from '../../context.js'
import { inAnyNetwork, inNetwork, parseCidr, parseIp, type Address } from '../../http/addresses.js'
import { settledBy, withDeadline } from '../../jobs/deadline.js'
import { PermanentJobError } from '../../jobs/queue.js'

const REFUSED = 'Callback URLs may not point at private or loopback addresses.'

/** Names that mean this machine whatever a resolver answers (and any name under `localhost`). */
const LOOPBACK_NAMES = new Set([
  'localhost',
  'localhost.localdomain',
  'localhost6',
  'localhost6.localdomain6',
  'ip6-localhost',
  'ip6-loopback',
])

/** A host name as compared: lower case, without the root's trailing dot. */
function canonicalName(host: string): string {
  return host.toLowerCase().replace(/\.$/, '')
}

function isLoopbackName(host: string): boolean {
  const name = canonicalName(host)
  return LOOPBACK_NAMES.has(name) || name.endsWith('.localhost')
}

const IPV4_COMPATIBLE = parseCidr('::/96')!
const NAT64_WELL_KNOWN = parseCidr('64:ff9b::/96')!

/**
 * The IPv4 address an IPv6 address carries and reaches: IPv4-compatible (`::a.b.c.d`), mapped
 * (`::ffff:a.b.c.d`), translated (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4
 * (`2002:AABB:CCDD::`). Null for every other address.
 */
function carriedIpv4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = a.parts
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 255, low >> 8, low & 255])
  const range = a.range()
  if (
    range === 'ipv4Mapped' ||
    range === 'rfc6145' ||
    inNetwork(a, IPV4_COMPATIBLE) ||
    inNetwork(a, NAT64_WELL_KNOWN)
  ) {
    return v4(p[6]!, p[7]!)
  }
  if (range === '6to4') return v4(p[1]!, p[2]!)
  return null
}

/**
 * Whether an address is an ordinary public one. ipaddr.js names every special range (loopback,
 * private, link-local, unique-local, unspecified, multicast, broadcast, carrier-grade NAT,
 * documentation, benchmarking, Teredo, local-use NAT64...); only its `unicast`, the rest, passes.
 * An IPv6 address carrying an IPv4 address is judged by that IPv4 address.
 */
function isPublic(a: Address): boolean {
  if (a.kind() === 'ipv4') return a.range() === 'unicast'
  const carried = carriedIpv4(a as ipaddr.IPv6)
  return carried ? isPublic(carried) : a.range() === 'unicast'
}

/** Parsed CALLBACK_ALLOW_LIST entries, per configuration. */
const allowLists = new WeakMap<Config, { names: Set<string>; networks: [Address, number][] }>()

function allowListOf(config: Config) {
  let list = allowLists.get(config)
  if (!list) {
    list = { names: new Set(), networks: [] }
    for (const entry of config.callbackAllowList) {
      const network = parseCidr(entry)
      if (network) list.networks.push(network)
      else list.names.add(canonicalName(entry))
    }
    allowLists.set(config, list)
  }
  return list
}

function allowListed(config: Config, host: string, address: Address | null): boolean {
  const list = allowListOf(config)
  if (list.names.has(canonicalName(host))) return true
  return !!address && inAnyNetwork(address, list.networks)
}

/**
 * Why a callback may not go to `host` (a URL's host name, or an address without brackets) at
 * `address` (null: not known yet), or null when it may. The one rule for callback targets.
 */
export function targetProblem(config: Config, host: string, address: string | null): string | null {
  const parsed = address === null ? null : parseIp(address)
  if (config.callbackAllowPrivate || allowListed(config, host, parsed)) return null
  if (isLoopbackName(host)) return REFUSED
  if (address === null) return null
  return parsed && isPublic(parsed) ? null : REFUSED
}

/** The host of a URL as a resolver or `isIP` takes it (IPv6 without brackets). */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '')
}

/** Why a callback URL is refused (without resolving names), or null when it may be used. */
export function callbackUrlProblem(config: Config, value: string): string | null {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'Enter a valid URL.'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return 'Only http and https callback URLs are allowed.'
  if (url.username || url.password) return 'Callback URLs may not carry credentials.'
  // The WHATWG parser has already rewritten other IPv4 spellings (0x7f.1, 2130706433, 0177.0.0.1)
  // and IPv6 ones (`[::127.0.0.1]` is `[::7f00:1]`) to the standard form.
  const host = hostOf(url)
  return targetProblem(config, host, isIP(host) ? host : null)
}

/** Callback deliveries are limited per target host: the group of a delivery job. */
export function callbackHost(payload: unknown): string {
  try {
    return canonicalName(new URL((payload as CallbackPayload).url).hostname)
  } catch {
    return ''
  }
}

export interface CallbackPayload {
  url: string
  body: { uuid: string; state: string; type: string; resource_uuid: string | null; modified: string }
  /** When the delivery gives up, attempts and waits included (absent in deliveries queued before). */
  deadline?: string
}

/** Sends callbacks over connections that only ever reach addresses `targetProblem` accepts. */
export class CallbackSender {
  private readonly agent: Agent

  constructor(
    private readonly config: Config,
    private readonly lookupHost: LookupHost,
  ) {
    const connect = buildConnector({ lookup: this.lookup })
    this.agent = new Agent({
      // The lane sends at most this many deliveries to one host at once; the pool needs no more.
      // (It also bounds the idle connection undici opens again after an aborted request.)
      connections: config.callbackHostConcurrency,
      connect: (options, callback) =>
        connect(options, (err, socket) => {
          if (err) return callback(err, null)
          // The address the socket did connect to, whichever way it was found (an address in the
          // URL connects without a lookup).
          const problem = targetProblem(this.config, options.hostname, socket.remoteAddress ?? null)
          if (!problem) return callback(null, socket)
          socket.destroy()
          callback(new Error(`callback connection to ${socket.remoteAddress} refused: ${problem}`), null)
        }),
    })
  }

  /** The addresses of `host`, all of them allowed (or the refusal naming the first that is not). */
  private async addresses(host: string) {
    const found = await this.lookupHost(host)
    for (const { address } of found) {
      const problem = targetProblem(this.config, host, address)
      if (problem) throw new Error(`callback host ${host} resolves to ${address}: ${problem}`)
    }
    if (!found.length) throw new Error(`callback host ${host} has no address`)
    return found
  }

  /** The connections' name lookup: it hands the socket only addresses that passed the check. */
  private readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.addresses(hostname).then(
      (found) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0
        const usable = family ? found.filter((a) => a.family === family) : found
        const first = usable[0]
        if (!first) callback(new Error(`callback host ${hostname} has no IPv${family} address`), '', 0)
        else if (options.all) callback(null, usable)
        else callback(null, first.address, first.family)
      },
      (e: Error) => callback(e, '', 0),
    )
  }

  /**
   * One delivery attempt within `timeoutMs` (connecting, sending and reading the answer); throws
   * on a refusal, a network error, a timeout or a non-2xx answer (the job retries).
   */
  async deliver(p: CallbackPayload, timeoutMs: number, signal: AbortSignal): Promise<void> {
    const problem = callbackUrlProblem(this.config, p.url)
    if (problem) throw new PermanentJobError(problem)
    const url = new URL(p.url)
    const host = hostOf(url)
    await withDeadline(timeoutMs, signal, async (deadline) => {
      // Refuses early, with a clear message; the connection checks again what it connects to.
      if (!isIP(host) && !this.config.callbackAllowPrivate) await settledBy(this.addresses(host), deadline)
      const answer = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'marketplace-api callback' },
        body: JSON.stringify(p.body),
        signal: deadline,
        dispatcher: this.agent,
      })
      await answer.body.dump({ limit: 64 * 1024, signal: deadline }).catch(() => undefined)
      if (answer.statusCode < 200 || answer.statusCode >= 300) {
        throw new Error(`callback answered ${answer.statusCode}`)
      }
    })
  }

  /** Drops open connections (those of deliveries still waiting included). */
  async close(): Promise<void> {
    await this.agent.destroy()
  }
}
