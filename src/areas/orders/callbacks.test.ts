import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfig } from '../../config.js'
import { callbackHost, targetProblem } from './callbacks.js'

const strict = loadConfig({}, { callbackAllowPrivate: false, callbackAllowList: [] })

// Addresses as resolvers and sockets report them: some spellings never come out of a URL.
const REFUSED_ADDRESSES = [
  '127.0.0.1',
  '127.255.255.254',
  '10.0.0.1',
  '172.31.255.255',
  '192.168.0.1',
  '100.64.0.1',
  '169.254.169.254',
  '0.0.0.0',
  '224.0.0.251',
  '255.255.255.255',
  '240.0.0.1',
  '192.0.2.10',
  '198.18.0.1',
  '::1',
  '::',
  '::127.0.0.1',
  '::7f00:1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:0:127.0.0.1',
  '64:ff9b::127.0.0.1',
  '64:ff9b::a00:1',
  '64:ff9b:1::5db8:d822',
  '2002:7f00:1::',
  '2002:c0a8:101::1',
  '2001::5db8:d822',
  'fe80::1',
  'fe80::1%eth0',
  'fc00::1',
  'fd00:ec2::254',
  'fec0::1',
  'ff02::1',
  '2001:db8::1',
  '100::1',
  'not an address',
  '',
]

const PUBLIC_ADDRESSES = [
  '93.184.216.34',
  '8.8.8.8',
  '2606:4700::1111',
  '2a00:1450:4001:82a::200e',
  '::ffff:93.184.216.34',
  '64:ff9b::5db8:d822',
  '2002:5db8:d822::1',
]

test('every loopback, private, link-local, reserved and embedded form of an address is refused', () => {
  for (const address of REFUSED_ADDRESSES) {
    assert.ok(targetProblem(strict, 'hooks.example.com', address), address)
  }
})

test('public addresses, also when an IPv6 address carries a public IPv4 one, are allowed', () => {
  for (const address of PUBLIC_ADDRESSES) {
    assert.equal(targetProblem(strict, 'hooks.example.com', address), null, address)
  }
})

test('names of this machine are refused whatever they resolve to', () => {
  for (const host of [
    'localhost',
    'localhost.',
    'LocalHost',
    'localhost.localdomain',
    'localhost6',
    'ip6-localhost',
    'ip6-loopback',
    'api.localhost',
    'api.localhost.',
  ]) {
    assert.ok(targetProblem(strict, host, null), host)
    assert.ok(targetProblem(strict, host, '93.184.216.34'), host)
  }
  assert.equal(targetProblem(strict, 'localhost.example.com', null), null)
  assert.equal(targetProblem(strict, 'notlocalhost', null), null)
})

test('CALLBACK_ALLOW_PRIVATE allows everything; CALLBACK_ALLOW_LIST names hosts and networks', () => {
  const open = loadConfig({}, { callbackAllowPrivate: true })
  for (const address of REFUSED_ADDRESSES) assert.equal(targetProblem(open, 'localhost', address), null)
  const listed = loadConfig({
    CALLBACK_ALLOW_LIST: 'hooks.internal, 10.20.0.0/16, fd00:1::/32, 192.168.7.7',
  })
  // A listed name may resolve to any address.
  assert.equal(targetProblem(listed, 'hooks.internal', '10.0.0.1'), null)
  assert.equal(targetProblem(listed, 'Hooks.Internal.', '127.0.0.1'), null)
  // A listed network admits its addresses, under any name, also in their IPv4-mapped form.
  assert.equal(targetProblem(listed, 'svc.example', '10.20.3.4'), null)
  assert.equal(targetProblem(listed, 'svc.example', '::ffff:10.20.3.4'), null)
  assert.equal(targetProblem(listed, 'svc.example', 'fd00:1::5'), null)
  assert.equal(targetProblem(listed, 'svc.example', '192.168.7.7'), null)
  assert.ok(targetProblem(listed, 'svc.example', '10.21.0.1'))
  assert.ok(targetProblem(listed, 'svc.example', '192.168.7.8'))
  assert.ok(targetProblem(listed, 'svc.example', '127.0.0.1'))
  assert.throws(
    () => loadConfig({ CALLBACK_ALLOW_LIST: '10.0.0.0/33' }),
    /CALLBACK_ALLOW_LIST: "10.0.0.0\/33" is not a valid CIDR/,
  )
})

test('deliveries are grouped by host name', () => {
  const group = (url: string) => callbackHost({ url, body: {} })
  assert.equal(group('https://Hooks.Example.com./a'), 'hooks.example.com')
  assert.equal(group('http://hooks.example.com:8080/b'), 'hooks.example.com')
  assert.equal(group('http://[::1]:8080/b'), '[::1]')
  assert.equal(group('nonsense'), '')
})
