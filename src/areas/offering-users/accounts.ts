// Project service accounts and course accounts: the accounts a provider's backend keeps for a
// project (a robot account, or a course's student account). Read here, on their own paths and per
// offering (the accounts of the projects with a live resource of the offering, for its provider's
// site agent); they are written by the provider's backend, not through this API yet.
import type { AppContext } from '../../context.js'
import type { Listing } from '../../db/listing.js'
import { forbidden } from '../../http/errors.js'
import { ownLink, recordRenderer } from '../../http/links.js'
import { resourceSidesVisibility, seesAsProvider, type Actor } from '../../http/permissions.js'
import { pageOfRows, type Pager } from '../../http/resource-calls.js'
import { eachRow, visibleRecords } from '../../http/visible-records.js'
import { findVisibleOffering } from '../catalog/service.js'
import {
  courseAccountsRepository,
  projectServiceAccountsRepository,
  type AccountScope,
  type CourseAccountRow,
  type ProjectServiceAccountRow,
} from './repository-accounts.js'
import { PATHS, type CourseAccount, type ProjectServiceAccount } from './schema.js'

/** Staff and support see every account; others those of the projects they see from either side. */
export const visibility: (actor: Actor) => AccountScope = resourceSidesVisibility

const toServiceAccount = recordRenderer<ProjectServiceAccountRow, ProjectServiceAccount>({
  ...ownLink(PATHS.projectServiceAccounts),
  created: 'copy',
  modified: 'copy',
  username: 'copy',
  description: 'copy',
  error_message: 'copy',
  error_traceback: 'copy',
  state: (r) => r.state,
  // A token is shown once, to whoever makes the account; never in a list.
  token: () => null,
  email: 'copy',
  expires_at: 'copy',
  preferred_identifier: 'copy',
  // The project as its uuid, as the reference's clients read it.
  project: (r) => r.project_uuid,
  project_uuid: 'copy',
  project_name: 'copy',
  customer_uuid: 'copy',
  customer_name: 'copy',
  customer_abbreviation: 'copy',
})

const toCourseAccount = recordRenderer<CourseAccountRow, CourseAccount>({
  ...ownLink(PATHS.courseAccounts),
  created: 'copy',
  modified: 'copy',
  // The project as its uuid, as the reference's clients read it.
  project: (r) => r.project_uuid,
  project_uuid: 'copy',
  project_name: 'copy',
  project_slug: 'copy',
  project_start_date: 'copy',
  project_end_date: 'copy',
  user_uuid: 'copy',
  username: 'copy',
  customer_uuid: 'copy',
  customer_name: 'copy',
  state: (r) => r.state,
  email: 'copy',
  description: 'copy',
  error_message: 'copy',
  error_traceback: 'copy',
})

const serviceAccounts = visibleRecords({
  rows: projectServiceAccountsRepository,
  visibility,
  model: 'ProjectServiceAccount',
  render: eachRow(toServiceAccount),
})
export const listServiceAccounts = serviceAccounts.list
export const getServiceAccount = serviceAccounts.get

const courseAccounts = visibleRecords({
  rows: courseAccountsRepository,
  visibility,
  model: 'CourseAccount',
  render: eachRow(toCourseAccount),
})
export const listCourseAccounts = courseAccounts.list
export const getCourseAccount = courseAccounts.get

/** The offering (404 unless visible) whose provider side the caller is (403 otherwise). */
async function providerOffering(ctx: AppContext, actor: Actor, uuid: string) {
  const offering = await findVisibleOffering(ctx, actor, uuid)
  if (!seesAsProvider(actor, offering)) throw forbidden()
  return offering
}

export async function listOfferingServiceAccounts(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  listing: Listing,
  base: string,
  page: Pager<ProjectServiceAccount>,
) {
  const offering = await providerOffering(ctx, actor, uuid)
  return pageOfRows(
    page,
    projectServiceAccountsRepository(ctx.db),
    { all: false, offeringId: offering.id },
    listing,
    (rows) => rows.map((r) => toServiceAccount(base, r)),
  )
}

export async function listOfferingCourseAccounts(
  ctx: AppContext,
  actor: Actor,
  uuid: string,
  listing: Listing,
  base: string,
  page: Pager<CourseAccount>,
) {
  const offering = await providerOffering(ctx, actor, uuid)
  return pageOfRows(
    page,
    courseAccountsRepository(ctx.db),
    { all: false, offeringId: offering.id },
    listing,
    (rows) => rows.map((r) => toCourseAccount(base, r)),
  )
}
