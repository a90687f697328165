// The event record (a CloudEvents 1.0 envelope, with its position) and the filters of the list
// and the stream.
import { Type, type Static } from '@sinclair/typebox'
import { filter } from '../../http/filters.js'

export const PATH = 'events'

export const EventSchema = Type.Object(
  {
    specversion: Type.String({ description: 'CloudEvents version: 1.0' }),
    id: Type.String({ format: 'uuid', description: "the event's own uuid" }),
    source: Type.String({ description: "the API's root URL" }),
    type: Type.String({ description: 'e.g. marketplace.order.state_changed' }),
    subject: Type.String({
      description: "the URL of the event's object (or of the scope it is seen through)",
    }),
    time: Type.String({ format: 'date-time' }),
    datacontenttype: Type.String(),
    position: Type.Integer({ description: 'the place of the event in commit order; resume after it' }),
    data: Type.Object(
      {
        uuid: Type.String({ format: 'uuid' }),
        url: Type.String(),
        object_type: Type.String(),
        offering_uuid: Type.Union([Type.String(), Type.Null()]),
        project_uuid: Type.Union([Type.String(), Type.Null()]),
        customer_uuid: Type.Union([Type.String(), Type.Null()]),
      },
      {
        additionalProperties: true,
        description: "the object's uuid, URL and scopes, and the change's facts",
      },
    ),
  },
  { additionalProperties: false },
)
export type EventRecord = Static<typeof EventSchema>

/** The filters of the list and the stream (values only: the service applies them). */
export const eventFilters = {
  type: filter.strings(undefined, { description: 'event types (repeatable or comma-separated)' }),
  object_type: filter.strings(undefined, { description: 'object types: order, resource, role_grant, ...' }),
  offering_uuid: filter.uuid(),
  project_uuid: filter.uuid(),
  customer_uuid: filter.uuid(),
  after: filter.integer(undefined, { description: 'only events past this position' }),
}

/** The stream's answer: documented as `text/event-stream` (it is written as the events come). */
export const StreamResponse = Type.Unsafe<string>({
  description:
    'Server-Sent Events: `id:` the position, `data:` the event as JSON; `event: reset` (with the ' +
    'position to go on from) when the position asked for is older than the retention; a comment ' +
    'line as a heartbeat.',
  content: { 'text/event-stream': { schema: { type: 'string' } } },
})
