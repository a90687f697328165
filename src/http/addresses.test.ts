import { test } from 'node:test'
import assert from 'node:assert/strict'
import { addressAfter, inNetwork, parseCidr, parseIp } from './addresses.js'

test('only the standard spellings of an address are read', () => {
  for (const [text, canonical] of [
    ['10.0.0.1', '10.0.0.1'],
    ['2001:0DB8::0:1', '2001:db8::1'],
    ['::ffff:1.2.3.4', '::ffff:102:304'],
    // The deprecated IPv4-compatible form keeps its own address (ipaddr.js alone maps it).
    ['::1.2.3.4', '::102:304'],
    ['::127.0.0.1', '::7f00:1'],
    ['0::1.2.3.4', '::102:304'],
    ['fe80::1%eth0', 'fe80::1'],
  ] as const) {
    assert.equal(parseIp(text)?.toString(), canonical, text)
  }
  for (const text of [
    '0x7f.1',
    '2130706433',
    '0177.0.0.1',
    '127.1',
    '010.0.0.1',
    '1.2.3.256',
    '',
    ' 1.2.3.4',
  ]) {
    assert.equal(parseIp(text), null, text)
  }
})

test('a CIDR is read as its network and prefix', () => {
  const show = (text: string) => {
    const c = parseCidr(text)
    return c && `${c[0].toString()}/${c[1]}`
  }
  assert.equal(show('10.0.0.7/24'), '10.0.0.0/24')
  assert.equal(show('10.0.0.7'), '10.0.0.7/32')
  assert.equal(show('2001:db8::1/32'), '2001:db8::/32')
  assert.equal(show('::1'), '::1/128')
  for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10/8', 'x/8', '10.0.0.0/8/8']) {
    assert.equal(parseCidr(bad), null, bad)
  }
})

test('network membership never crosses address families', () => {
  const net = parseCidr('10.0.0.0/8')!
  assert.equal(inNetwork(parseIp('10.2.3.4')!, net), true)
  assert.equal(inNetwork(parseIp('11.0.0.1')!, net), false)
  assert.equal(inNetwork(parseIp('::ffff:10.2.3.4')!, net), false)
  assert.equal(inNetwork(parseIp('::a02:304')!, parseCidr('::/96')!), true)
})

test('address offsets carry across bytes', () => {
  assert.equal(addressAfter(parseIp('10.0.0.0')!, 2).toString(), '10.0.0.2')
  assert.equal(addressAfter(parseIp('10.0.0.255')!, 1).toString(), '10.0.1.0')
  assert.equal(addressAfter(parseIp('10.0.0.0')!, 2 ** 24 - 2).toString(), '10.255.255.254')
  assert.equal(addressAfter(parseIp('2001:db8::ffff')!, 1).toString(), '2001:db8::1:0')
  assert.equal(addressAfter(parseIp('2001:db8::')!, 2 ** 30).toString(), '2001:db8::4000:0')
})
