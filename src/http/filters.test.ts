import { test } from 'node:test'
import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { compileFilters, filter } from './filters.js'

const U = '0f8fad5b-d9cb-469f-a165-70867728950e'

const parse = compileFilters({
  active: filter.boolean('t.active'),
  owner: filter.link('customers', 'c.uuid'),
  owner_uuid: filter.uuid('c.uuid'),
  state: filter.choice(['a', 'b'] as const, 't.state'),
  score: filter.choice([1, 2, 3] as const, 't.score'),
  name: filter.contains('t.name'),
  since: filter.after('t.created'),
  slugs: filter.strings('t.slug'),
  only_value: filter.integer(),
  custom: filter.custom(
    { type: 'string' } as never,
    (q) => (q.custom === undefined ? undefined : String(q.custom)),
    (_eb, v) => sql<boolean>`x = ${v}`,
  ),
})

test('each filter becomes a condition on its column, with the value as stored', () => {
  const r = parse({
    active: 'TRUE',
    owner_uuid: U.replace(/-/g, ''),
    state: ['a', 'b'],
    score: '2',
    name: '50%',
    since: '2026-01-15',
    slugs: ['x, y', 'z'],
  })
  assert.deepEqual(r.values, {
    active: true,
    owner_uuid: U,
    state: ['a', 'b'],
    score: [2],
    name: '50%',
    since: '2026-01-15T00:00:00.000Z',
    slugs: ['x', 'y', 'z'],
  })
  assert.deepEqual(r.where, [
    { op: '=', column: 't.active', value: 1 },
    { op: '=', column: 'c.uuid', value: U },
    { op: 'in', column: 't.state', value: ['a', 'b'] },
    { op: 'in', column: 't.score', value: [2] },
    { op: 'contains', column: 't.name', value: '50%' },
    { op: '>=', column: 't.created', value: '2026-01-15T00:00:00.000Z' },
    { op: 'in', column: 't.slug', value: ['x', 'y', 'z'] },
  ])
})

test('absent and empty parameters add nothing; an unrecognised boolean is ignored', () => {
  assert.deepEqual(parse({ active: 'maybe', name: '', state: '', slugs: ',' }), { values: {}, where: [] })
})

test('a link of another kind matches nothing instead of failing', () => {
  const r = parse({ owner: `http://h/api/projects/${U}/` })
  assert.deepEqual(r.values, { owner: null })
  assert.deepEqual(r.where, [{ op: 'none' }])
  const ok = parse({ owner: `http://h/api/customers/${U}/` })
  assert.deepEqual(ok.where, [{ op: '=', column: 'c.uuid', value: U }])
})

test('malformed values answer 400 on the parameter, the first in declaration order', () => {
  const fails = (q: Record<string, unknown>, body: unknown) =>
    assert.throws(() => parse(q), { kind: 'invalid', body })
  fails({ owner_uuid: 'nope' }, { owner_uuid: ['Enter a valid UUID.'] })
  fails({ state: 'c' }, { state: ['Select a valid choice. c is not one of the available choices.'] })
  fails({ score: '02' }, { score: ['Select a valid choice. 02 is not one of the available choices.'] })
  fails({ since: '2026-02-31' }, { since: ['Enter a valid date/time.'] })
  fails({ only_value: '1.5' }, { only_value: ['Enter a whole number.'] })
  fails({ since: 'x', owner_uuid: 'y' }, { owner_uuid: ['Enter a valid UUID.'] })
})

test('a filter without a column only hands its value on; a repository condition is built', () => {
  const r = parse({ only_value: '7', custom: 'v' })
  assert.deepEqual(r.values, { only_value: 7, custom: 'v' })
  assert.equal(r.where.length, 1)
  assert.equal(r.where[0]!.op, 'sql')
})
