// The SQLite statement cache: rows built from raw arrays match better-sqlite3's own objects, and a
// schema change never leaves a row builder with the old columns.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import SQLite from 'better-sqlite3'
import { withStatementCache } from './sqlite-driver.js'

function cached() {
  const handle = new SQLite(':memory:')
  handle.exec(`create table t (id integer primary key, name text, n real);
    insert into t (name, n) values ('a', 1.5), ('b', null);`)
  return { handle, cache: withStatementCache(handle) }
}

test('rows are the same objects better-sqlite3 builds, duplicate names keeping the last value', () => {
  const { handle, cache } = cached()
  const text = `select t.*, t.name as label, 'x' as name from t order by id`
  assert.deepEqual(cache.prepare(text).all([]), handle.prepare(text).all())
  assert.deepEqual(cache.prepare(text).all([]), [
    { id: 1, name: 'x', n: 1.5, label: 'a' },
    { id: 2, name: 'x', n: null, label: 'b' },
  ])
  assert.deepEqual(cache.prepare('select * from t where id = ?').all([2]), [{ id: 2, name: 'b', n: null }])
  assert.deepEqual(cache.prepare('select * from t where id = ?').all([3]), [])
})

test('writes run, and returning clauses come back as rows', () => {
  const { cache } = cached()
  const r = cache.prepare('update t set n = ? where id = ?').run([2, 2])
  assert.equal(r.changes, 1)
  assert.deepEqual(cache.prepare(`insert into t (name) values (?) returning id, name`).all(['c']), [
    { id: 3, name: 'c' },
  ])
})

test('a schema change empties the cache: select * sees the new column', () => {
  const { cache } = cached()
  const statement = cache.prepare('select * from t where id = 1')
  assert.deepEqual(statement.all([]), [{ id: 1, name: 'a', n: 1.5 }])
  cache.prepare('alter table t add column extra text').run([])
  assert.deepEqual(cache.prepare('select * from t where id = 1').all([]), [
    { id: 1, name: 'a', n: 1.5, extra: null },
  ])
  // A statement held from before the change rebuilds its row shape too.
  assert.deepEqual(statement.all([]), [{ id: 1, name: 'a', n: 1.5, extra: null }])
})
