// Reading IP addresses and CIDRs: ipaddr.js does the arithmetic and the classification; this file
// only decides which spellings count as an address, so every area reads them alike.
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

export type Address = ipaddr.IPv4 | ipaddr.IPv6

// `::a.b.c.d`, the deprecated IPv4-compatible form (RFC 4291 2.5.5.1).
const IPV4_COMPATIBLE = /^::(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})(?:%.*)?$/

/**
 * The address written in `text`, or null. Only the standard spellings count (four decimal parts
 * for IPv4, as node:net reads them): ipaddr.js alone would also read `0x7f.1` or `2130706433`.
 * A zone (`fe80::1%eth0`) is not part of the address and is dropped.
 */
export function parseIp(text: string): Address | null {
  if (!isIP(text)) return null
  // ipaddr.js reads `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d`; it is a.b.c.d in the last 32
  // bits of ::/96.
  const compatible = IPV4_COMPATIBLE.exec(text)
  if (compatible) {
    const [a, b, c, d] = ipaddr.IPv4.parse(compatible[1]!).octets as [number, number, number, number]
    return new ipaddr.IPv6([0, 0, 0, 0, 0, 0, (a << 8) | b, (c << 8) | d])
  }
  const address = ipaddr.parse(text)
  return address.kind() === 'ipv6' ? new ipaddr.IPv6((address as ipaddr.IPv6).parts) : address
}

/**
 * `address/prefix` (a bare address stands for itself: /32 or /128) as its network's first address
 * and the prefix, or null when it is not one.
 */
export function parseCidr(text: string): [Address, number] | null {
  const m = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(text)
  if (!m) return null
  const address = parseIp(m[1]!)
  if (!address) return null
  const bits = address.kind() === 'ipv4' ? 32 : 128
  const prefix = m[2] === undefined ? bits : Number(m[2])
  if (prefix > bits) return null
  const cidr = `${address.toString()}/${prefix}`
  const network =
    address.kind() === 'ipv4'
      ? ipaddr.IPv4.networkAddressFromCIDR(cidr)
      : ipaddr.IPv6.networkAddressFromCIDR(cidr)
  return [network, prefix]
}

/** Whether `address` lies in the network `[net, prefix]` (never across IPv4 and IPv6). */
export function inNetwork(address: Address, [net, prefix]: [Address, number]): boolean {
  return address.kind() === net.kind() && address.match(net, prefix)
}

/**
 * Whether `address` lies in one of `networks`; an IPv4 network also admits the IPv4-mapped
 * spelling of its addresses (`::ffff:a.b.c.d`, as a dual-stack socket shows an IPv4 peer).
 */
export function inAnyNetwork(address: Address, networks: readonly [Address, number][]): boolean {
  const candidates: Address[] = [address]
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    candidates.push((address as ipaddr.IPv6).toIPv4Address())
  }
  return networks.some((network) => candidates.some((a) => inNetwork(a, network)))
}

/**
 * The address `n` places after `a`. ipaddr.js has no address arithmetic; this adds `n` to the
 * address's bytes, carrying from the last one.
 */
export function addressAfter(a: Address, n: number): Address {
  const bytes = a.toByteArray()
  let carry = n
  for (let i = bytes.length - 1; i >= 0 && carry > 0; i--) {
    const sum = bytes[i]! + carry
    bytes[i] = sum % 256
    carry = Math.floor(sum / 256)
  }
  return ipaddr.fromByteArray(bytes)
}

/**
 * Which hops' X-Forwarded-For may be believed, as Fastify asks (`address`, `hop` from 0, the
 * socket's peer): a hop count trusts that many proxies whatever their addresses (so the server
 * must be reachable only through them); a list trusts the proxies at those addresses and CIDRs.
 */
export function trustProxyFunction(
  trust: false | number | string[],
): false | ((address: string, hop: number) => boolean) {
  if (trust === false) return false
  if (typeof trust === 'number') return (_address, hop) => hop < trust
  const networks = trust.map((entry) => parseCidr(entry)).filter((n): n is [Address, number] => n !== null)
  return (address) => {
    const a = parseIp(address)
    return !!a && inAnyNetwork(a, networks)
  }
}
