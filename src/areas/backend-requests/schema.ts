// Backend resource requests (spec 2.5 / 3.2 / 4.4, reference §4).
import { Type, type Static } from '@sinclair/typebox'
import { Body, DateTime, Nullable, Url, Uuid } from '../../http/schemas.js'

export const PATH = 'backend-resource-requests'

export const STATES = ['Sent', 'Processing', 'Done', 'Erred'] as const
export type RequestState = (typeof STATES)[number]

export const BackendRequestSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  created: DateTime,
  modified: DateTime,
  started: Nullable(DateTime),
  finished: Nullable(DateTime),
  state: Type.String({ description: STATES.join(', ') }),
  offering: Uuid,
  offering_name: Type.String(),
  offering_url: Url,
  error_message: Type.String(),
  error_traceback: Type.String(),
})
export type BackendRequest = Static<typeof BackendRequestSchema>

export const CreateBody = Body({ offering: Type.String({ description: 'offering uuid' }) })
export const ErredBody = Body({
  error_message: Type.Optional(Type.String()),
  error_traceback: Type.Optional(Type.String()),
})
