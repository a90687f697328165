// callback_url: where an order's state changes are POSTed, and the guard that keeps those
// requests out of private networks (checked when the URL is given and again, after DNS
// resolution, when a callback is delivered).
import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import type { Config } from '../../config.js'

const PRIVATE = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv4')
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(net, prefix, 'ipv6')
}

function allowListed(config: Config, host: string, address: string | null): boolean {
  for (const entry of config.callbackAllowList) {
    if (entry.includes('/')) {
      const [net, bits] = entry.split('/')
      const family = isIP(net ?? '')
      if (!family || !address || isIP(address) !== family) continue
      const list = new BlockList()
      list.addSubnet(net!, Number(bits), family === 4 ? 'ipv4' : 'ipv6')
      if (list.check(address, family === 4 ? 'ipv4' : 'ipv6')) return true
    } else if (entry.toLowerCase() === host.toLowerCase()) {
      return true
    }
  }
  return false
}

function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (!family) return false
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4')
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6')
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
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (config.callbackAllowPrivate || allowListed(config, host, isIP(host) ? host : null)) return null
  if (host === 'localhost' || host.endsWith('.localhost') || isPrivateAddress(host)) {
    return 'Callback URLs may not point at private or loopback addresses.'
  }
  return null
}

/** Resolves the host and refuses private targets (a public name may point into the network). */
export async function assertDeliverable(config: Config, value: string): Promise<URL> {
  const problem = callbackUrlProblem(config, value)
  if (problem) throw new Error(problem)
  const url = new URL(value)
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (config.callbackAllowPrivate) return url
  const addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true })
  for (const { address } of addresses) {
    if (isPrivateAddress(address) && !allowListed(config, host, address)) {
      throw new Error(`callback host ${host} resolves to a private address`)
    }
  }
  return url
}

export interface CallbackPayload {
  url: string
  body: { uuid: string; state: string; type: string; resource_uuid: string | null; modified: string }
}

/** One delivery attempt; throws on a network error or a non-2xx answer (the job retries). */
export async function deliver(config: Config, p: CallbackPayload): Promise<void> {
  const url = await assertDeliverable(config, p.url)
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), config.callbackTimeoutMs)
  try {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'marketplace-api callback' },
      body: JSON.stringify(p.body),
      redirect: 'manual',
      signal: controller.signal,
    })
    await r.arrayBuffer().catch(() => undefined)
    if (r.status < 200 || r.status >= 300) throw new Error(`callback answered ${r.status}`)
  } finally {
    clearTimeout(timer)
  }
}
