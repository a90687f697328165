// HTTP for /api/backend-resource-requests/.
import { filter } from '../../http/filters.js'
import { requireStaff } from '../../http/permissions.js'
import { defineAction, defineResource, resourceRoutes } from '../../http/resource.js'
import { StatusBody } from '../../http/schemas.js'
import * as svc from './service.js'
import * as s from './schema.js'
import type { Action } from './state-machine.js'

const R = 'backend_resource_requests'

/** A status action without a body. */
const move = (name: Action, summary: string) =>
  defineAction({
    name,
    summary,
    response: StatusBody,
    run: (c) => svc.transition(c.ctx, c.actor, c.uuid, name),
  })

export const backendRequests = defineResource({
  path: s.PATH,
  noun: 'backend resource request',
  record: s.BackendRequestSchema,
  visibility: svc.visibility,
  list: {
    filters: {
      offering_uuid: filter.uuid('offerings.uuid'),
      state: filter.choice(s.STATES, `${R}.state`),
      created: filter.after(`${R}.created`, { description: 'created at or after' }),
      modified: filter.after(`${R}.modified`, { description: 'modified at or after' }),
      started: filter.after(`${R}.started`, { description: 'started at or after' }),
      finished: filter.after(`${R}.finished`, { description: 'finished at or after' }),
    },
    ordering: {
      fields: { created: `${R}.created` },
      default: [{ column: `${R}.created`, desc: false }],
    },
    run: (c) => svc.list(c.ctx, c.scope, c.listing, c.base, c.page),
  },
  retrieve: { run: (c) => svc.get(c.ctx, c.actor, c.uuid, c.base) },
  create: {
    body: s.CreateBody,
    // Staff only: others get 403 whatever the body holds.
    permission: requireStaff,
    run: (c) => svc.create(c.ctx, c.actor, c.body, c.base),
  },
  actions: [
    move('start_processing', 'Start processing a request'),
    move('set_done', 'Mark a request as done'),
    defineAction({
      name: 'set_erred',
      summary: 'Mark a request as erred',
      body: s.ErredBody,
      // A body-less call stores empty strings rather than failing on the missing object.
      bodyOptional: true,
      response: StatusBody,
      run: (c) => svc.transition(c.ctx, c.actor, c.uuid, 'set_erred', c.body),
    }),
  ],
})

export const backendRequestsRoutes = resourceRoutes([backendRequests])
