// The HTTP side of the generic operations, for the kit: delete, pull, unlink, set_ok and
// set_erred of one kind of cloud resource.
import { Type } from '@sinclair/typebox'
import { defineAction, type ActionSpec, type ItemCall } from '../../http/resource.js'
import { Body } from '../../http/schemas.js'
import { scheduleDeletion, schedulePull, setResourceState, unlinkResource } from './operations.js'

/** The body of set_erred: the error to record (both optional, default empty). */
export const SetErredBody = Body({
  error_message: Type.Optional(Type.String({ maxLength: 10000 })),
  error_traceback: Type.Optional(Type.String({ maxLength: 100000 })),
})
export const StateDetail = Type.Object({ detail: Type.String() })

/**
 * POST `/<uuid>/set_ok/` and `/<uuid>/set_erred/` (staff only) for one kind of cloud resource:
 * both answer `{"detail": ...}`; set_erred's body is optional.
 */
export function stateActions(type: string, noun: string): ActionSpec<any>[] {
  return [
    defineAction({
      name: 'set_ok',
      summary: `Staff only: mark the ${noun} OK and clear its error`,
      response: StateDetail,
      run: (c) => setResourceState(c.ctx, c.actor, type, c.uuid, 'OK'),
    }),
    defineAction({
      name: 'set_erred',
      summary: `Staff only: mark the ${noun} ERRED with the error given`,
      body: SetErredBody,
      bodyOptional: true,
      response: StateDetail,
      run: (c) => setResourceState(c.ctx, c.actor, type, c.uuid, 'ERRED', c.body),
    }),
  ]
}

/** POST `/<uuid>/pull/` (202) and `/<uuid>/unlink/` (staff only, 204), then set_ok / set_erred. */
export function lifecycleActions(type: string, noun: string): ActionSpec<any>[] {
  return [
    defineAction({
      name: 'pull',
      summary:
        'Schedule a synchronization from the backend: 202 no body; 409 no body when the driver has no pull',
      status: 202,
      response: null,
      run: (c) => schedulePull(c.ctx, c.actor, type, c.uuid),
    }),
    defineAction({
      name: 'unlink',
      summary: 'Staff only: remove the record without any backend call, whatever its state',
      status: 204,
      response: null,
      run: (c) => unlinkResource(c.ctx, c.actor, type, c.uuid),
    }),
    ...stateActions(type, noun),
  ]
}

/** DELETE of a cloud resource: deletion scheduled, the backend deletion runs as a job. */
export function scheduledDestroy(type: string) {
  return {
    summary: 'Schedule deletion (DELETION_SCHEDULED); the backend deletion then runs as a job',
    run: (c: ItemCall) => scheduleDeletion(c.ctx, c.actor, type, c.uuid),
  }
}
