// What the request log shows of a URL: query parameters that can carry a secret have their values
// replaced, however the name is spelled (any case, percent-encoded, `+` for a space, repeated).

const SECRET_PARAMS = new Set([
  'x-auth-token',
  'token',
  'auth_token',
  'access_token',
  'api_key',
  'apikey',
  'key',
  'password',
  'secret',
  'signature',
  'sig',
])

const CENSOR = '[redacted]'

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '))
  } catch {
    // Malformed escapes: decode what can be, so `%2D` still reads as `-`.
    return s.replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
  }
}

/** Is this (raw, possibly encoded) query parameter name one whose value is secret? */
export function isSecretParam(rawName: string): boolean {
  return SECRET_PARAMS.has(decode(rawName).trim().toLowerCase())
}

export function redactUrl(url: string): string {
  const q = url.indexOf('?')
  if (q < 0) return url
  const hash = url.indexOf('#', q)
  const query = url.slice(q + 1, hash < 0 ? undefined : hash)
  const parts = query.split(/([&;])/).map((part, i) => {
    if (i % 2 === 1) return part // a separator
    const eq = part.indexOf('=')
    const name = eq < 0 ? part : part.slice(0, eq)
    return eq >= 0 && isSecretParam(name) ? `${name}=${CENSOR}` : part
  })
  return `${url.slice(0, q + 1)}${parts.join('')}${hash < 0 ? '' : url.slice(hash)}`
}

/** Header paths pino redacts wherever a request or response is logged. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-auth-token"]',
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-auth-token"]',
  '*.password',
  '*.token',
]
