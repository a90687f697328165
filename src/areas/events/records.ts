// An event as the API shows it: its envelope with absolute URLs and its position.
import type { StoredEvent } from './outbox.js'
import type { EventFilters } from './repository.js'
import type { EventRecord } from './schema.js'

/** A URL stored as a path (no PUBLIC_URL when it was written) made absolute on `base`. */
function absolute(url: unknown, base: string): string {
  const s = typeof url === 'string' ? url : ''
  return s.startsWith('/') ? `${base}${s}` : s
}

export function eventRecord(e: StoredEvent, base: string): EventRecord {
  const env = e.envelope
  return {
    specversion: env.specversion,
    id: env.id,
    source: absolute(env.source, base),
    type: env.type,
    subject: absolute(env.subject, base),
    time: env.time,
    datacontenttype: env.datacontenttype,
    position: e.position,
    data: { ...env.data, url: absolute(env.data.url, base) } as EventRecord['data'],
  }
}

/** Does the event pass the list's and stream's filters? */
export function matches(e: StoredEvent, f: EventFilters): boolean {
  if (f.after !== undefined && e.position <= f.after) return false
  if (f.type?.length && !f.type.includes(e.envelope.type)) return false
  if (f.object_type?.length && !f.object_type.includes(e.objectType)) return false
  if (f.offering_uuid && e.offeringUuid !== f.offering_uuid) return false
  if (f.project_uuid && e.projectUuid !== f.project_uuid) return false
  if (f.customer_uuid && e.customerUuid !== f.customer_uuid) return false
  return true
}
