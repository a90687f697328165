// What a caller of the directory may see.
import { customerIds, projectIds, seesAll, type Actor } from '../../http/permissions.js'
import type { Visibility } from './repository.js'

/** Staff and support see every row; others the rows of their customers and projects. */
export function visibilityOf(actor: Actor): Visibility {
  if (seesAll(actor)) return { all: true }
  return { all: false, userId: actor.id, customerIds: customerIds(actor), projectIds: projectIds(actor) }
}
