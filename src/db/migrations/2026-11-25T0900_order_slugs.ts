import type { Kysely } from 'kysely'

// Orders used to be stored with an empty slug, which the reference's clients refuse (they require
// `^[-a-zA-Z0-9_]+$`). Each such order gets the slug a new order gets: from its resource's name,
// else its offering's name, by Django's slugify rules (a frozen copy of src/http/slug.ts, as
// migrations never import application code).
function slugify(text: string, fallback: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[^ -~\s]/g, '')
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .slice(0, 50)
    .replace(/^[-_]+|[-_]+$/g, '')
  return slug || fallback
}

const BATCH = 1000

export async function up(db: Kysely<any>): Promise<void> {
  let after = 0
  for (;;) {
    const rows: { id: number; resource_name: string | null; offering_name: string | null }[] = await db
      .selectFrom('orders')
      .leftJoin('resources', 'resources.id', 'orders.resource_id')
      .leftJoin('offerings', 'offerings.id', 'orders.offering_id')
      .select(['orders.id', 'resources.name as resource_name', 'offerings.name as offering_name'])
      .where('orders.slug', '=', '')
      .where('orders.id', '>', after)
      .orderBy('orders.id')
      .limit(BATCH)
      .execute()
    if (!rows.length) return
    for (const r of rows) {
      const slug = slugify(r.resource_name ?? '', '') || slugify(r.offering_name ?? '', 'order')
      await db.updateTable('orders').set({ slug }).where('id', '=', r.id).execute()
    }
    after = rows[rows.length - 1]!.id
  }
}

export async function down(): Promise<void> {
  // The generated slugs are valid values; nothing to undo.
}
