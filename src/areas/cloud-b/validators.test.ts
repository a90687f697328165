import { test } from 'node:test'
import assert from 'node:assert/strict'
import { normalizeIp, parseCidr, ruleErrors, validateMappings, validateRoutes } from './validators.js'

test('CIDRs are normalized to their network', () => {
  assert.equal(parseCidr('10.0.0.7/24')?.text, '10.0.0.0/24')
  assert.equal(parseCidr('192.168.1.1')?.text, '192.168.1.1/32')
  assert.equal(parseCidr('2001:DB8::1/32')?.text, '2001:db8::/32')
  assert.equal(parseCidr('0.0.0.0/0')?.text, '0.0.0.0/0')
  for (const bad of ['10.0.0.0/33', '10.0.0/24', 'abc', '', '::/129', 5, null, '10.0.0.0/ 8']) {
    assert.equal(parseCidr(bad), null, String(bad))
  }
})

test('IP addresses are normalized', () => {
  assert.equal(normalizeIp('10.0.0.1'), '10.0.0.1')
  assert.equal(normalizeIp('2001:0DB8:0:0:0:0:0:1'), '2001:db8::1')
  assert.equal(normalizeIp('::ffff:1.2.3.4'), '::ffff:102:304')
  assert.equal(normalizeIp('10.0.0.256'), null)
  assert.equal(normalizeIp('10.0.0.0/24'), null)
})

test('valid routes are normalized', () => {
  const r = validateRoutes([
    { destination: '10.1.0.5/16', nexthop: '192.168.0.10' },
    { destination: '2001:db8::/48', nexthop: '2001:DB8::1' },
  ])
  assert.deepEqual(r, {
    ok: true,
    value: [
      { destination: '10.1.0.0/16', nexthop: '192.168.0.10' },
      { destination: '2001:db8::/48', nexthop: '2001:db8::1' },
    ],
  })
  assert.deepEqual(validateRoutes([]), { ok: true, value: [] })
})

test('invalid destinations and nexthops are reported per item', () => {
  const r = validateRoutes([
    { destination: '10.0.0.0/24', nexthop: '10.0.0.1' },
    { destination: 'nope', nexthop: '300.1.1.1' },
    { nexthop: '10.0.0.1' },
  ])
  assert.deepEqual(r, {
    ok: false,
    errors: {
      routes: [
        {},
        { destination: ['Invalid CIDR format.'], nexthop: ['Enter a valid IPv4 or IPv6 address.'] },
        { destination: ['This field is required.'] },
      ],
    },
  })
  assert.equal(validateRoutes('x').ok, false)
})

test("a nexthop equal to one of the router's own addresses is refused", () => {
  const r = validateRoutes([{ destination: '10.0.0.0/24', nexthop: '192.168.0.1' }], ['192.168.0.1'])
  assert.deepEqual(r, { ok: false, errors: { non_field_errors: ['Nexthop 192.168.0.1 is used by router.'] } })
})

test('mappings default and normalize', () => {
  assert.deepEqual(validateMappings(undefined), {
    ok: true,
    value: {
      volume_types: [],
      subnets: [],
      skip_connection_extnet: false,
      sync_instance_ports: false,
      networks: [],
    },
  })
  const u = '3F2504E0-4F89-11D3-9A0C-0305E82C3301'
  const r = validateMappings({
    volume_types: [{ src_type_uuid: u.replaceAll('-', ''), dst_type_uuid: u }],
    subnets: [{ src_cidr: '10.0.0.1/24', dst_cidr: '192.168.5.0/24' }],
    skip_connection_extnet: true,
    networks: [u],
    extra: 1,
  })
  assert.deepEqual(r, {
    ok: true,
    value: {
      volume_types: [{ src_type_uuid: u.toLowerCase(), dst_type_uuid: u.toLowerCase() }],
      subnets: [{ src_cidr: '10.0.0.0/24', dst_cidr: '192.168.5.0/24' }],
      skip_connection_extnet: true,
      sync_instance_ports: false,
      networks: [u.toLowerCase()],
    },
  })
})

test('malformed mappings are reported under mappings', () => {
  assert.deepEqual(validateMappings([]), {
    ok: false,
    errors: { mappings: ['Expected a dictionary of items but got type "list".'] },
  })
  assert.deepEqual(
    validateMappings({
      volume_types: [{ src_type_uuid: 'x' }],
      subnets: [{ src_cidr: '10.0.0.0/24', dst_cidr: '8.8.8.0/24' }],
      skip_connection_extnet: 'maybe',
      networks: ['a'],
    }),
    {
      ok: false,
      errors: {
        mappings: {
          volume_types: [
            { src_type_uuid: ['Must be a valid UUID.'], dst_type_uuid: ['This field is required.'] },
          ],
          subnets: [{ dst_cidr: ['Destination CIDR must be a private range.'] }],
          skip_connection_extnet: ['Must be a valid boolean.'],
          networks: { '0': ['Must be a valid UUID.'] },
        },
      },
    },
  )
  assert.deepEqual(validateMappings({ subnets: 'x' }), {
    ok: false,
    errors: { mappings: { subnets: ['Expected a list of items but got type "str".'] } },
  })
  assert.deepEqual(
    validateMappings({
      sync_instance_ports: true,
      subnets: [{ src_cidr: '10.0.0.0/24', dst_cidr: '10.1.0.0/24' }],
    }),
    {
      ok: false,
      errors: {
        mappings: { non_field_errors: ['sync_instance_ports cannot be combined with subnet mappings.'] },
      },
    },
  )
})

test('rule ports are limited to 1-65535 and ordered', () => {
  assert.deepEqual(ruleErrors({ from_port: 22, to_port: 22, protocol: 'tcp', cidr: '0.0.0.0/0' }), {})
  assert.deepEqual(ruleErrors({ from_port: 0, to_port: 65536 }), {
    from_port: ['Ensure this value is greater than or equal to 1.'],
    to_port: ['Ensure this value is less than or equal to 65535.'],
  })
  assert.deepEqual(ruleErrors({ from_port: 80, to_port: 22 }), {
    to_port: ['"to_port" should be greater than or equal to "from_port".'],
  })
  assert.deepEqual(ruleErrors({ from_port: 1.5 }), { from_port: ['A valid integer is required.'] })
  assert.deepEqual(ruleErrors({ protocol: 'gre', ethertype: 'IPv5', direction: 'up' }), {
    ethertype: ['"IPv5" is not a valid choice.'],
    direction: ['"up" is not a valid choice.'],
    protocol: ['"gre" is not a valid choice.'],
  })
  assert.deepEqual(ruleErrors({ ethertype: 'IPv6', cidr: '10.0.0.0/8' }), {
    cidr: ["CIDR does not match the rule's ethertype IPv6."],
  })
})
