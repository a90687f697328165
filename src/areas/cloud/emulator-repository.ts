// SQL of the cloud emulator's durable state: its options, counters and objects, per service settings.
import { sql, type Kysely } from 'kysely'
import type { DB } from '../../db/tables.js'
import type { Dialect } from '../../db/database.js'
import { parseJson, toJson } from '../../db/values.js'
import { firstWhere } from '../../db/rows.js'

export function emulatorRepository(db: Kysely<DB>) {
  return {
    async settingsOptions(settingsId: number): Promise<unknown> {
      const r = await firstWhere(db.selectFrom('service_settings').select('options'), 'id', settingsId)
      return r?.options ?? null
    },
    /**
     * Consumes one pending failure for `op` from options.fail_next (a list of operation names, or
     * a count of operations). True when this call must fail. The settings row is locked on
     * PostgreSQL so two workers never consume the same entry.
     */
    async consumeFailNext(dialect: Dialect, settingsId: number, op: string, now: string): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const lock = dialect === 'postgres' ? sql` for update` : sql``
        const r = await sql<{
          options: unknown
        }>`select options from service_settings where id = ${settingsId}${lock}`.execute(trx)
        const options = parseJson<Record<string, unknown>>(r.rows[0]?.options, {})
        const pending = options.fail_next
        let next: unknown
        if (Array.isArray(pending)) {
          const i = pending.indexOf(op)
          if (i < 0) return false
          next = pending.filter((_, j) => j !== i)
        } else if (typeof pending === 'number' && pending >= 1) {
          next = Math.floor(pending) - 1
        } else {
          return false
        }
        const updated = { ...options }
        if ((Array.isArray(next) && next.length === 0) || next === 0) delete updated.fail_next
        else updated.fail_next = next
        await trx
          .updateTable('service_settings')
          .set({ options: toJson(updated), modified: now })
          .where('id', '=', settingsId)
          .execute()
        return true
      })
    },
    async nextCounter(settingsId: number, name: string): Promise<number> {
      return db.transaction().execute(async (trx) => {
        await trx
          .insertInto('cloud_emulator_counters')
          .values({ service_settings_id: settingsId, name, value: 0 })
          .onConflict((oc) => oc.columns(['service_settings_id', 'name']).doNothing())
          .execute()
        const r = await trx
          .updateTable('cloud_emulator_counters')
          .set((eb) => ({ value: eb('value', '+', 1) }))
          .where('service_settings_id', '=', settingsId)
          .where('name', '=', name)
          .returning('value')
          .executeTakeFirstOrThrow()
        return Number(r.value)
      })
    },
    async getObject<T>(settingsId: number, kind: string, backendId: string): Promise<T | null> {
      const r = await db
        .selectFrom('cloud_emulator_objects')
        .select('data')
        .where('service_settings_id', '=', settingsId)
        .where('kind', '=', kind)
        .where('backend_id', '=', backendId)
        .executeTakeFirst()
      return r ? parseJson<T | null>(r.data, null) : null
    },
    async putObject(settingsId: number, kind: string, backendId: string, data: unknown, now: string) {
      await db
        .insertInto('cloud_emulator_objects')
        .values({
          service_settings_id: settingsId,
          kind,
          backend_id: backendId,
          data: toJson(data),
          created: now,
          modified: now,
        })
        .onConflict((oc) =>
          oc
            .columns(['service_settings_id', 'kind', 'backend_id'])
            .doUpdateSet({ data: toJson(data), modified: now }),
        )
        .execute()
    },
    async deleteObject(settingsId: number, kind: string, backendId: string): Promise<boolean> {
      const r = await db
        .deleteFrom('cloud_emulator_objects')
        .where('service_settings_id', '=', settingsId)
        .where('kind', '=', kind)
        .where('backend_id', '=', backendId)
        .executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    },
    async listObjects<T>(settingsId: number, kind: string): Promise<{ backend_id: string; data: T }[]> {
      const rows = await db
        .selectFrom('cloud_emulator_objects')
        .select(['backend_id', 'data'])
        .where('service_settings_id', '=', settingsId)
        .where('kind', '=', kind)
        .orderBy('id')
        .execute()
      return rows.map((r) => ({ backend_id: r.backend_id, data: parseJson<T>(r.data, null as T) }))
    },
  }
}
