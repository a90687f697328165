// Pure checks of cloudB inputs: static routes (spec 4.10), migration mappings (spec 2.13) and
// security group rule ports (spec 8, 1-65535). No database, no clock: unit-tested beside this file.
import { isIP } from 'node:net'
import { normalizeUuid } from '../../http/uuid.js'

export type FieldErrors = Record<string, unknown>

// ---- addresses ----

function ipv4ToBig(ip: string): bigint {
  return ip.split('.').reduce((acc, p) => (acc << 8n) | BigInt(Number(p)), 0n)
}

function bigToIpv4(v: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 255n)).join('.')
}

function ipv6ToBig(ip: string): bigint {
  let text = ip
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (v4) {
    const n = ipv4ToBig(v4[1]!)
    text = text.slice(0, -v4[1]!.length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined]
  const h = head ? head.split(':') : []
  const t = tail ? tail.split(':') : []
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t]
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g || '0', 16)), 0n)
}

/** RFC 5952 text of a 128-bit value: lowercase, leading zeros dropped, longest zero run as `::`. */
function bigToIpv6(v: bigint): string {
  const groups: number[] = []
  for (let i = 7; i >= 0; i--) groups.push(Number((v >> BigInt(i * 16)) & 0xffffn))
  let bestStart = -1
  let bestLen = 0
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i
      bestLen = j - i
    }
    i = j
  }
  const hex = groups.map((g) => g.toString(16))
  if (bestStart < 0) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`
}

export interface Cidr {
  version: 4 | 6
  network: bigint
  prefix: number
  /** canonical text: host bits cleared, e.g. 10.0.0.0/24 */
  text: string
}

/**
 * Parses `address/prefix` (a bare address is a host route, /32 or /128) and normalizes it to
 * its network, as the reference does for route destinations. Null when not a CIDR.
 */
export function parseCidr(value: unknown): Cidr | null {
  if (typeof value !== 'string') return null
  const m = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(value.trim())
  if (!m) return null
  const version = isIP(m[1]!)
  if (version !== 4 && version !== 6) return null
  const bits = version === 4 ? 32 : 128
  const prefix = m[2] === undefined ? bits : Number(m[2])
  if (prefix > bits) return null
  const addr = version === 4 ? ipv4ToBig(m[1]!) : ipv6ToBig(m[1]!)
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix)
  const network = addr & mask
  const text = `${version === 4 ? bigToIpv4(network) : bigToIpv6(network)}/${prefix}`
  return { version, network, prefix, text }
}

/** The canonical text of an IPv4 or IPv6 address, or null when the value is not one. */
export function normalizeIp(value: unknown): string | null {
  if (typeof value !== 'string') return null
  const v = isIP(value.trim())
  if (v === 4) return bigToIpv4(ipv4ToBig(value.trim()))
  if (v === 6) return bigToIpv6(ipv6ToBig(value.trim()))
  return null
}

/** The n-th address of a network (n from 0), as text. */
export function addressAt(cidr: Cidr, n: number): string {
  const v = cidr.network + BigInt(n)
  return cidr.version === 4 ? bigToIpv4(v) : bigToIpv6(v)
}

/** How many addresses the network holds (capped, for IPv6). */
export function networkSize(cidr: Cidr): number {
  const bits = (cidr.version === 4 ? 32 : 128) - cidr.prefix
  return bits >= 30 ? 2 ** 30 : 2 ** bits
}

export function cidrContains(cidr: Cidr, ip: string): boolean {
  const v = isIP(ip)
  if (v !== cidr.version) return false
  const bits = v === 4 ? 32 : 128
  const addr = v === 4 ? ipv4ToBig(ip) : ipv6ToBig(ip)
  const mask = cidr.prefix === 0 ? 0n : ((1n << BigInt(cidr.prefix)) - 1n) << BigInt(bits - cidr.prefix)
  return (addr & mask) === cidr.network
}

const PRIVATE_V4 = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'].map((c) => parseCidr(c)!)
const PRIVATE_V6 = [parseCidr('fc00::/7')!]

/** True when the whole network lies in a private range (RFC 1918, or IPv6 unique local). */
export function isPrivateCidr(c: Cidr): boolean {
  const ranges = c.version === 4 ? PRIVATE_V4 : PRIVATE_V6
  const first = addressAt(c, 0)
  return ranges.some((r) => c.prefix >= r.prefix && cidrContains(r, first))
}

// ---- static routes (set_routes) ----

export interface Route {
  destination: string
  nexthop: string
}

export type Checked<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors }

/**
 * Validates a `routes` list: each destination a CIDR (normalized), each nexthop an IPv4 or IPv6
 * address, and no nexthop equal to one of the router's own fixed IPs.
 * Errors nest under `routes` per item, as DRF renders a list serializer's errors.
 * Mirrors waldur openstack/serializers.py StaticRouteSerializer / RouterSetRoutesSerializer.
 */
export function validateRoutes(input: unknown, routerIps: readonly string[] = []): Checked<Route[]> {
  if (!Array.isArray(input)) {
    return {
      ok: false,
      errors: { routes: ['Expected a list of items but got type "' + typeOf(input) + '".'] },
    }
  }
  const itemErrors: FieldErrors[] = []
  const out: Route[] = []
  let failed = false
  for (const item of input) {
    const e: FieldErrors = {}
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      itemErrors.push({
        non_field_errors: ['Invalid data. Expected a dictionary, but got ' + typeOf(item) + '.'],
      })
      failed = true
      continue
    }
    const r = item as Record<string, unknown>
    let destination = ''
    let nexthop = ''
    if (r.destination === undefined || r.destination === null || r.destination === '') {
      e.destination = ['This field is required.']
    } else {
      const c = parseCidr(r.destination)
      if (!c) e.destination = ['Invalid CIDR format.']
      else destination = c.text
    }
    if (r.nexthop === undefined || r.nexthop === null || r.nexthop === '') {
      e.nexthop = ['This field is required.']
    } else {
      const ip = normalizeIp(r.nexthop)
      if (!ip) e.nexthop = ['Enter a valid IPv4 or IPv6 address.']
      else nexthop = ip
    }
    if (Object.keys(e).length) failed = true
    itemErrors.push(e)
    out.push({ destination, nexthop })
  }
  if (failed) return { ok: false, errors: { routes: itemErrors } }
  const own = new Set(routerIps.map((ip) => normalizeIp(ip) ?? ip))
  for (const r of out) {
    if (own.has(r.nexthop)) {
      return { ok: false, errors: { non_field_errors: [`Nexthop ${r.nexthop} is used by router.`] } }
    }
  }
  return { ok: true, value: out }
}

function typeOf(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'list'
  if (typeof v === 'string') return 'str'
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float'
  if (typeof v === 'boolean') return 'bool'
  return typeof v
}

// ---- migration mappings (spec 2.13) ----

export interface Mappings {
  volume_types: { src_type_uuid: string; dst_type_uuid: string }[]
  subnets: { src_cidr: string; dst_cidr: string }[]
  skip_connection_extnet: boolean
  sync_instance_ports: boolean
  networks: string[]
}

export const EMPTY_MAPPINGS: Mappings = {
  volume_types: [],
  subnets: [],
  skip_connection_extnet: false,
  sync_instance_ports: false,
  networks: [],
}

function listOfObjects(
  v: unknown,
  keys: readonly string[],
  check: (key: string, value: unknown) => { value?: string; error?: string },
): Checked<Record<string, string>[]> {
  if (!Array.isArray(v))
    return { ok: false, errors: { _: [`Expected a list of items but got type "${typeOf(v)}".`] } }
  const out: Record<string, string>[] = []
  const errs: FieldErrors[] = []
  let failed = false
  for (const item of v) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      errs.push({ non_field_errors: [`Invalid data. Expected a dictionary, but got ${typeOf(item)}.`] })
      failed = true
      continue
    }
    const e: FieldErrors = {}
    const o: Record<string, string> = {}
    for (const k of keys) {
      const raw = (item as Record<string, unknown>)[k]
      if (raw === undefined || raw === null || raw === '') {
        e[k] = ['This field is required.']
        continue
      }
      const r = check(k, raw)
      if (r.error) e[k] = [r.error]
      else o[k] = r.value!
    }
    if (Object.keys(e).length) failed = true
    errs.push(e)
    out.push(o)
  }
  return failed ? { ok: false, errors: { _: errs } } : { ok: true, value: out }
}

function asBool(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v
  if (v === 'true' || v === 'True' || v === 1 || v === '1') return true
  if (v === 'false' || v === 'False' || v === 0 || v === '0') return false
  return null
}

/**
 * Validates and normalizes the `mappings` object of a migration: the structure of spec 2.13,
 * uuids in their canonical form, CIDRs normalized, destination CIDRs in private ranges, and
 * `sync_instance_ports` not combined with subnet mappings (reference §12). Missing keys take
 * their defaults; unknown keys are dropped. Errors nest under `mappings`.
 */
export function validateMappings(input: unknown): Checked<Mappings> {
  if (input === undefined || input === null) return { ok: true, value: structuredClone(EMPTY_MAPPINGS) }
  if (typeof input !== 'object' || Array.isArray(input)) {
    return {
      ok: false,
      errors: { mappings: [`Expected a dictionary of items but got type "${typeOf(input)}".`] },
    }
  }
  const m = input as Record<string, unknown>
  const e: FieldErrors = {}
  const out: Mappings = structuredClone(EMPTY_MAPPINGS)
  if (m.volume_types !== undefined) {
    const r = listOfObjects(m.volume_types, ['src_type_uuid', 'dst_type_uuid'], (_k, v) => {
      const u = normalizeUuid(v)
      return u ? { value: u } : { error: 'Must be a valid UUID.' }
    })
    if (r.ok) out.volume_types = r.value as Mappings['volume_types']
    else e.volume_types = r.errors._
  }
  if (m.subnets !== undefined) {
    const r = listOfObjects(m.subnets, ['src_cidr', 'dst_cidr'], (k, v) => {
      const c = parseCidr(v)
      if (!c) return { error: 'Invalid CIDR format.' }
      if (k === 'dst_cidr' && !isPrivateCidr(c)) return { error: 'Destination CIDR must be a private range.' }
      return { value: c.text }
    })
    if (r.ok) out.subnets = r.value as Mappings['subnets']
    else e.subnets = r.errors._
  }
  for (const k of ['skip_connection_extnet', 'sync_instance_ports'] as const) {
    if (m[k] === undefined) continue
    const b = asBool(m[k])
    if (b === null) e[k] = ['Must be a valid boolean.']
    else out[k] = b
  }
  if (m.networks !== undefined) {
    if (!Array.isArray(m.networks)) {
      e.networks = [`Expected a list of items but got type "${typeOf(m.networks)}".`]
    } else {
      const errs: Record<string, string[]> = {}
      m.networks.forEach((v, i) => {
        const u = normalizeUuid(v)
        if (u) out.networks.push(u)
        else errs[String(i)] = ['Must be a valid UUID.']
      })
      if (Object.keys(errs).length) e.networks = errs
    }
  }
  if (!Object.keys(e).length && out.sync_instance_ports && out.subnets.length) {
    e.non_field_errors = ['sync_instance_ports cannot be combined with subnet mappings.']
  }
  if (Object.keys(e).length) return { ok: false, errors: { mappings: e } }
  return { ok: true, value: out }
}

// ---- security group rules ----

export const RULE_PROTOCOLS = ['tcp', 'udp', 'icmp', ''] as const

export interface RuleInput {
  ethertype?: unknown
  direction?: unknown
  protocol?: unknown
  from_port?: unknown
  to_port?: unknown
  cidr?: unknown
}

/**
 * Checks a security group rule: ports integers from 1 to 65535 (spec section 8) with
 * from_port <= to_port, ethertype IPv4/IPv6, direction ingress/egress, protocol tcp/udp/icmp or
 * empty, and a CIDR of the rule's ethertype when given. Returns field errors (empty when valid).
 */
export function ruleErrors(r: RuleInput): FieldErrors {
  const e: FieldErrors = {}
  for (const k of ['from_port', 'to_port'] as const) {
    const v = r[k]
    if (v === undefined || v === null) continue
    if (typeof v !== 'number' || !Number.isInteger(v)) e[k] = ['A valid integer is required.']
    else if (v < 1) e[k] = ['Ensure this value is greater than or equal to 1.']
    else if (v > 65535) e[k] = ['Ensure this value is less than or equal to 65535.']
  }
  if (
    !e.from_port &&
    !e.to_port &&
    typeof r.from_port === 'number' &&
    typeof r.to_port === 'number' &&
    r.from_port > r.to_port
  ) {
    e.to_port = ['"to_port" should be greater than or equal to "from_port".']
  }
  if (r.ethertype !== undefined && r.ethertype !== 'IPv4' && r.ethertype !== 'IPv6') {
    e.ethertype = [`"${String(r.ethertype)}" is not a valid choice.`]
  }
  if (r.direction !== undefined && r.direction !== 'ingress' && r.direction !== 'egress') {
    e.direction = [`"${String(r.direction)}" is not a valid choice.`]
  }
  if (r.protocol !== undefined && r.protocol !== null) {
    const p = typeof r.protocol === 'string' ? r.protocol.toLowerCase() : r.protocol
    if (!(RULE_PROTOCOLS as readonly unknown[]).includes(p)) {
      e.protocol = [`"${String(r.protocol)}" is not a valid choice.`]
    }
  }
  if (r.cidr !== undefined && r.cidr !== null && r.cidr !== '') {
    const c = parseCidr(r.cidr)
    const want = r.ethertype === 'IPv6' ? 6 : 4
    if (!c) e.cidr = ['Invalid CIDR format.']
    else if (c.version !== want)
      e.cidr = [`CIDR does not match the rule's ethertype ${want === 4 ? 'IPv4' : 'IPv6'}.`]
  }
  return e
}
