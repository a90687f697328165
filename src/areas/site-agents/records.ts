// Site agent rows as the API's records: an identity with its services, a service with its
// processors, a processor with its service.
import type { AppContext } from '../../context.js'
import { parseJson } from '../../db/values.js'
import { urlOf } from '../../http/links.js'
import * as repo from './repository.js'
import type { IdentityRow, ServiceRow } from './repository.js'
import {
  IDENTITY_PATH,
  PROCESSOR_PATH,
  SERVICE_PATH,
  stateLabel,
  type Dependency,
  type Identity,
  type Processor,
  type Service,
} from './schema.js'

interface ProcessorRow {
  uuid: string
  name: string
  last_run: string | null
  backend_type: string
  backend_version: string | null
  created: string
  modified: string
}

/** A processor's record, as a service lists it (without its service). */
function processorFields(b: string, p: ProcessorRow) {
  return {
    uuid: p.uuid,
    url: urlOf(b, PROCESSOR_PATH, p.uuid)!,
    name: p.name,
    last_run: p.last_run,
    backend_type: p.backend_type,
    backend_version: p.backend_version,
    created: p.created,
    modified: p.modified,
  }
}

/** A processor's record, with its service. */
export function toProcessor(
  b: string,
  p: ProcessorRow,
  service: { service_uuid: string; service_name: string },
): Processor {
  const { uuid, url, ...rest } = processorFields(b, p)
  return { uuid, url, service: service.service_uuid, service_name: service.service_name, ...rest }
}

/** The services' records, each with its processors. */
export async function toServices(ctx: AppContext, b: string, rows: ServiceRow[]): Promise<Service[]> {
  const procs = await repo.processorsOfServices(
    ctx.db,
    rows.map((r) => r.id),
  )
  return rows.map((r) => ({
    uuid: r.uuid,
    url: urlOf(b, SERVICE_PATH, r.uuid)!,
    identity: r.identity_uuid,
    identity_name: r.identity_name,
    name: r.name,
    mode: r.mode,
    state: stateLabel(r.state),
    statistics: parseJson(r.statistics, {}),
    created: r.created,
    modified: r.modified,
    processors: procs.filter((p) => p.service_id === r.id).map((p) => processorFields(b, p)),
  }))
}

export async function serviceRecord(ctx: AppContext, b: string, id: number): Promise<Service> {
  return (await toServices(ctx, b, [(await repo.serviceById(ctx.db, id))!]))[0]!
}

/** The identities' records, each with its services (and their processors). */
export async function toIdentities(ctx: AppContext, b: string, rows: IdentityRow[]): Promise<Identity[]> {
  const ids = rows.map((r) => r.id)
  const serviceRows = ids.length ? await repo.servicesOfIdentities(ctx.db, ids) : []
  const records = await toServices(ctx, b, serviceRows)
  return rows.map((r) =>
    toIdentity(
      b,
      r,
      records.filter((_, i) => serviceRows[i]!.identity_id === r.id),
    ),
  )
}

export async function identityRecord(ctx: AppContext, b: string, id: number): Promise<Identity> {
  return (await toIdentities(ctx, b, [(await repo.identityById(ctx.db, id))!]))[0]!
}

function toIdentity(b: string, r: IdentityRow, serviceRecords: Service[]): Identity {
  return {
    uuid: r.uuid,
    url: urlOf(b, IDENTITY_PATH, r.uuid)!,
    name: r.name,
    // The reference's clients read the offering and the creator as uuids.
    offering: r.offering_uuid,
    offering_uuid: r.offering_uuid,
    offering_name: r.offering_name,
    version: r.version,
    dependencies: parseJson<Dependency[]>(r.dependencies, []),
    config_file_path: r.config_file_path,
    config_file_content: r.config_file_content,
    last_restarted: r.last_restarted_at ?? r.created,
    last_polled_at: r.last_polled_at,
    created: r.created,
    modified: r.modified,
    created_by: r.created_by_uuid,
    services: serviceRecords,
  }
}
