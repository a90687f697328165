// SQL of project service accounts and course accounts: the rows a caller sees (the project's
// side, and the provider side of the project's resources), and an offering's accounts.
import type { ExpressionBuilder } from 'kysely'
import { tableRecords } from '../../db/rows.js'
import { joined, projectAndCustomer } from '../../db/joins.js'
import { inAnyOf } from '../../db/sql.js'
import type { ResourceSidesVisibility } from '../../db/relations.js'
import type { Db } from './repository.js'

/**
 * Which accounts a list or a look-up reaches: every one (staff and support); those of the
 * projects a caller reaches (a project role, a customer role on the project's organization, or
 * the provider side of a live resource in the project); or those of the projects with a live
 * resource of one offering.
 */
export type AccountScope = ResourceSidesVisibility | { all: false; offeringId: number }

type Table = 'project_service_accounts' | 'course_accounts'

/** The project has a resource (not Terminated) of an offering matching `offering`. */
function liveResource(
  eb: ExpressionBuilder<any, any>,
  table: Table,
  offering: (w: ExpressionBuilder<any, any>) => any,
) {
  return eb.exists(
    eb
      .selectFrom('resources')
      .innerJoin('offerings', 'offerings.id', 'resources.offering_id')
      .select('resources.id')
      .whereRef('resources.project_id', '=', `${table}.project_id`)
      .where('resources.state', '<>', 'Terminated')
      .where(offering),
  )
}

function accountsOf<T extends Table>(db: Db, table: T) {
  const base = () => joined(db, table, projectAndCustomer(table))
  const visible = (scope: AccountScope) => {
    if (scope.all) return base()
    if ('offeringId' in scope)
      return base().where((eb) => liveResource(eb, table, (w) => w('offerings.id', '=', scope.offeringId)))
    return base().where((eb) =>
      eb.or([
        inAnyOf(eb, [
          [`${table}.project_id`, scope.projectIds],
          ['projects.customer_id', scope.customerIds],
        ]),
        liveResource(eb, table, (w) =>
          inAnyOf(w, [
            ['offerings.customer_id', scope.customerIds],
            ['offerings.id', scope.offeringIds],
          ]),
        ),
      ]),
    )
  }
  return { base, visible }
}

export function projectServiceAccountsRepository(db: Db) {
  const { base, visible } = accountsOf(db, 'project_service_accounts')
  const select = (q: ReturnType<typeof base>) =>
    q.select([
      'project_service_accounts.id',
      'project_service_accounts.uuid',
      'project_service_accounts.created',
      'project_service_accounts.modified',
      'project_service_accounts.username',
      'project_service_accounts.description',
      'project_service_accounts.error_message',
      'project_service_accounts.error_traceback',
      'project_service_accounts.state',
      'project_service_accounts.email',
      'project_service_accounts.expires_at',
      'project_service_accounts.preferred_identifier',
      'projects.uuid as project_uuid',
      'projects.name as project_name',
      'customers.uuid as customer_uuid',
      'customers.name as customer_name',
      'customers.abbreviation as customer_abbreviation',
    ])
  return tableRecords(db, { table: 'project_service_accounts', base, visible, select })
}

export function courseAccountsRepository(db: Db) {
  const { base, visible } = accountsOf(db, 'course_accounts')
  const select = (q: ReturnType<typeof base>) =>
    q
      .innerJoin('users', 'users.id', 'course_accounts.user_id')
      .select([
        'course_accounts.id',
        'course_accounts.uuid',
        'course_accounts.created',
        'course_accounts.modified',
        'course_accounts.username',
        'course_accounts.email',
        'course_accounts.description',
        'course_accounts.state',
        'course_accounts.error_message',
        'course_accounts.error_traceback',
        'projects.uuid as project_uuid',
        'projects.name as project_name',
        'projects.slug as project_slug',
        'projects.start_date as project_start_date',
        'projects.end_date as project_end_date',
        'customers.uuid as customer_uuid',
        'customers.name as customer_name',
        'users.uuid as user_uuid',
      ])
  return tableRecords(db, { table: 'course_accounts', base, visible, select })
}

export type ProjectServiceAccountRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof projectServiceAccountsRepository>['findById']>>
>
export type CourseAccountRow = NonNullable<
  Awaited<ReturnType<ReturnType<typeof courseAccountsRepository>['findById']>>
>
