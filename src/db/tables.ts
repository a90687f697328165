// Row types of every table, as Kysely sees them. Booleans are stored as 0/1 integers, timestamps
// as ISO-8601 text, JSON as text (SQLite) or jsonb (PostgreSQL): see src/db/values.ts.
// Each area declares its tables in its own file of src/db/tables/ and joins the DB interface below.
import type { AgentsInvitationsTables } from './tables/agents-invitations.js'
import type { CatalogTables } from './tables/catalog.js'
import type { EventSubscriptionsTables } from './tables/event-subscriptions.js'
import type { CloudBTables } from './tables/cloud-b.js'
import type { CloudATables, CloudCommonTables } from './tables/cloud.js'
import type { EventTables } from './tables/events.js'
import type { IdempotencyTables } from './tables/idempotency.js'
import type { OfferingUsersTables } from './tables/offering-users.js'
import type { OrderTables } from './tables/orders.js'
import type { PlatformTables } from './tables/platform.js'
import type { PoliciesTables } from './tables/policies.js'
import type { UsageTables } from './tables/usage.js'

export type * from './tables/values.js'
export type * from './tables/platform.js'
export type * from './tables/catalog.js'
export type * from './tables/policies.js'
export type * from './tables/orders.js'
export type * from './tables/agents-invitations.js'
export type * from './tables/cloud.js'
export type * from './tables/cloud-b.js'
export type * from './tables/offering-users.js'
export type * from './tables/event-subscriptions.js'
export type * from './tables/usage.js'
export type * from './tables/events.js'
export type * from './tables/idempotency.js'

// ---- the database: one interface per area, joined here ----
export interface DB
  extends
    PlatformTables,
    CatalogTables,
    OrderTables,
    PoliciesTables,
    AgentsInvitationsTables,
    CloudCommonTables,
    CloudATables,
    CloudBTables,
    OfferingUsersTables,
    EventSubscriptionsTables,
    UsageTables,
    EventTables,
    IdempotencyTables {}
