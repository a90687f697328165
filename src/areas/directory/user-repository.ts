// SQL of users, their tokens and their e-mail confirmations.
import { insertReturningId } from '../../db/compiled.js'
import { scopedList } from '../../db/listing.js'
import { deleteRow, firstWhere, updateRow } from '../../db/rows.js'
import { icontainsAny } from '../../db/sql.js'
import type { Db, Visibility } from './repository.js'

/** The `query` filter of users: username, full name or e-mail. */
export const searchUsers = icontainsAny(['users.username', 'users.full_name', 'users.email'])

export function usersRepository(db: Db) {
  /** Staff and support see every user; others themselves. */
  function visible(vis: Visibility) {
    const q = db.selectFrom('users')
    return vis.all ? q : q.where('users.id', '=', vis.userId)
  }
  const all = () => db.selectFrom('users').selectAll()
  return {
    ...scopedList(visible, (q) => q.selectAll('users'), 'users.id'),
    findVisibleByUuid: (vis: Visibility, uuid: string) => firstWhere(visible(vis).selectAll(), 'uuid', uuid),
    findByUuid: (uuid: string) => firstWhere(all(), 'uuid', uuid),
    findById: (id: number) => firstWhere(all(), 'id', id),
    findByUsername: (username: string) => firstWhere(all(), 'username', username),
    insert: (values: Record<string, unknown>) => insertReturningId(db, 'users', values),
    update: (id: number, values: Record<string, unknown>) => updateRow(db, 'users', id, values),
    delete: (id: number) => deleteRow(db, 'users', id),
    /**
     * The pending address becomes the user's e-mail, if it is still `pending`: a change made in
     * between wins. Whether it did.
     */
    async confirmPendingEmail(id: number, pending: string, now: string): Promise<boolean> {
      const r = await db
        .updateTable('users')
        .set({
          email: pending,
          pending_email: null,
          email_token_hash: null,
          email_token_expires: null,
          modified: now,
        })
        .where('id', '=', id)
        .where('pending_email', '=', pending)
        .executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },
    async insertToken(userId: number, keyHash: string, created: string): Promise<void> {
      await db.insertInto('tokens').values({ user_id: userId, key_hash: keyHash, created }).execute()
    },
    async hasToken(keyHash: string): Promise<boolean> {
      return !!(await db.selectFrom('tokens').select('id').where('key_hash', '=', keyHash).executeTakeFirst())
    },
    /** An event with no recipient (a message for a mail relay or an operator to pass on). */
    async insertEvent(e: {
      uuid: string
      event_type: string
      message: string
      context: string
      created: string
    }) {
      await db
        .insertInto('events')
        .values({ ...e, recipient_user_id: null })
        .execute()
    },
  }
}
