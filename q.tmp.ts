import { createDatabase } from './src/db/database.js'
import { sql } from 'kysely'
const { db } = await createDatabase('sqlite:bench/data/bench-1000000.sqlite')
const time = async (label: string, fn: () => Promise<unknown>, n = 2000) => {
  for (let i = 0; i < 200; i++) await fn()
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) await fn()
  console.log(label, (Number(process.hrtime.bigint() - t0) / 1000 / n).toFixed(1), 'µs')
}
const q = db.selectFrom('orders').select('orders.id').orderBy('orders.created', 'desc').orderBy('orders.id', 'desc').limit(10).offset(0)
console.log(q.compile().sql)
console.log((await sql.raw('explain query plan ' + q.compile().sql.replace(/\?/g, '10')).execute(db)).rows)
await time('page ids (built each time)', () => db.selectFrom('orders').select('orders.id').orderBy('orders.created', 'desc').orderBy('orders.id', 'desc').limit(10).offset(0).execute())
const c = q.compile()
await time('page ids (compiled)', () => db.executeQuery(c))
