// Links in request bodies: the pathname read from a plain link is the WHATWG parser's, and every
// other link still goes to the parser.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { urlPath, uuidFromLink } from './links.js'

function parserPath(value: string): string | null {
  try {
    return new URL(value).pathname
  } catch {
    return null
  }
}

const u = '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'

test('links read without the parser give the parser pathname, and malformed ones give none', () => {
  const cases = [
    `http://127.0.0.1:40123/api/projects/${u}/`,
    `https://marketplace.example.org/api/projects/${u}/`,
    `http://localhost/api/projects/${u}`,
    `http://a-b.c-d.example:8080/api/x_y/${u}/`,
    'http://host:65535/p',
    'http://host:65536/p',
    'http://host:99999/p',
    'http://host:00080/p',
    'http://0.0.0.0/p',
    'http://255.255.255.255/p',
    'http://256.1.1.1/p',
    'http://1.2.3.999/p',
    'http://01.2.3.4/p',
    'http://09.2.3.4/p',
    'http://1.2.3/p',
    'http://999/p',
    'http://0x/p',
    'http://0x1f/p',
    'http://0xg/p',
    'http://a.0x1f/p',
    'http://a.12/p',
    'http://12.a/p',
    'http://xn--a/p',
    'http://xn--nxasmq6b/p',
    'http://-a-/p',
    'http://a--b/p',
    'http://a..b/p',
    'http://.a/p',
    'http://a./p',
    'http://a/p/./q/../r',
    'http://a/p/%2e%2e/q',
    'http://a/p\\q',
    'http://a/p q',
    'http://a/p?x=1',
    'http://a/p#f',
    'http://user@a/p',
    'http://A/p',
    'HTTP://a/p',
    'http:/a/p',
    'http://a',
    'http://:80/p',
    'http://a:/p',
    'ftp://a/p',
    'foo://a/api/projects/x/',
    ' http://a/p',
    'http://a/p\n',
    'http://a\t/p',
    '',
  ]
  for (const value of cases) assert.equal(urlPath(value), parserPath(value), JSON.stringify(value))
})

test('generated links: the same pathname as the parser for every one', () => {
  // A fixed-seed generator, so a failure names a reproducible input.
  let seed = 12345
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n
  }
  const pick = <T>(xs: readonly T[]) => xs[next(xs.length)]!
  const hostParts = ['a', 'b1', '0', '1', '255', '256', '09', '0x', '0xff', 'xn--a', 'a-b', '-', 'Z', '']
  const pathParts = ['api', 'projects', u, '.', '..', '%2e', 'x_y', 'a-b', '', 'Ä', '\\', ' ']
  for (let i = 0; i < 5000; i++) {
    const host = Array.from({ length: 1 + next(4) }, () => pick(hostParts)).join('.')
    const port = pick(['', ':', ':80', ':65535', ':65536', ':0', ':123456'])
    const path = Array.from({ length: next(5) }, () => pick(pathParts)).join('/')
    const value = `${pick(['http', 'https', 'ftp'])}://${host}${port}${pick(['', '/'])}${path}`
    assert.equal(urlPath(value), parserPath(value), JSON.stringify(value))
  }
})

test('a uuid is read from absolute and path-only links to the named kind only', () => {
  assert.equal(uuidFromLink(`http://127.0.0.1:3000/api/projects/${u}/`, 'projects'), u)
  assert.equal(uuidFromLink(`https://h.example/api/projects/${u.toUpperCase()}`, 'projects'), u)
  assert.equal(uuidFromLink(`/api/projects/${u}/?x=1`, 'projects'), u)
  assert.equal(uuidFromLink(`http://h/api/customers/${u}/`, 'projects'), null)
  assert.equal(uuidFromLink(`http://h/api/projects/${u}/extra/`, 'projects'), null)
  assert.equal(uuidFromLink(`http://h:70000/api/projects/${u}/`, 'projects'), null)
  assert.equal(uuidFromLink(`http://h/api/projects/../projects/${u}/`, 'projects'), u)
  assert.equal(uuidFromLink(42, 'projects'), null)
})
