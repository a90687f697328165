// Pure checks of cloudB inputs: static routes (spec 4.10), migration mappings (spec 2.13) and
// security group rule ports (spec 8, 1-65535). No database, no clock: unit-tested beside this file.
import ipaddr from 'ipaddr.js'
import {
  addressAfter,
  inNetwork,
  parseCidr as parseNetwork,
  parseIp,
  type Address,
} from '../../http/addresses.js'
import { normalizeUuid } from '../../http/uuid.js'

export type FieldErrors = Record<string, unknown>

// ---- addresses ----

export interface Cidr {
  version: 4 | 6
  /** the network's first address (host bits cleared) */
  network: Address
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
  const parsed = parseNetwork(value.trim())
  if (!parsed) return null
  const [network, prefix] = parsed
  return {
    version: network.kind() === 'ipv4' ? 4 : 6,
    network,
    prefix,
    text: `${network.toString()}/${prefix}`,
  }
}

/** The canonical text of an IPv4 or IPv6 address (RFC 5952 for IPv6), or null when the value is not one. */
export function normalizeIp(value: unknown): string | null {
  if (typeof value !== 'string') return null
  return parseIp(value.trim())?.toString() ?? null
}

/** The n-th address of a network (n from 0), as text. */
export function addressAt(cidr: Cidr, n: number): string {
  return addressAfter(cidr.network, n).toString()
}

/** How many addresses the network holds (capped, for IPv6). */
export function networkSize(cidr: Cidr): number {
  const bits = (cidr.version === 4 ? 32 : 128) - cidr.prefix
  return bits >= 30 ? 2 ** 30 : 2 ** bits
}

export function cidrContains(cidr: Cidr, ip: string): boolean {
  const address = parseIp(ip)
  return !!address && inNetwork(address, [cidr.network, cidr.prefix])
}

const PRIVATE_RANGES = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'].map((c) =>
  ipaddr.parseCIDR(c),
)

/** True when the whole network lies in a private range (RFC 1918, or IPv6 unique local). */
export function isPrivateCidr(c: Cidr): boolean {
  return PRIVATE_RANGES.some((range) => c.prefix >= range[1] && inNetwork(c.network, range))
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
