// User group invitations and permission requests (spec 2.6 / 3.3 / 4.5, reference §5).
import { Type, type Static } from '@sinclair/typebox'
import { AnyValue, Body, DateTime, ListQuery, Nullable, Url, Uuid } from '../../http/schemas.js'

export const PATH = 'user-group-invitations'
export const REQUEST_PATH = 'user-permission-requests'

export const SCOPE_TYPES = ['customer', 'project'] as const
export const REQUEST_STATES = ['pending', 'approved', 'rejected', 'canceled'] as const
/** The states a list may be filtered by: the reference's clients also send `draft`, a state no
 * request here is ever in. */
export const REQUEST_FILTER_STATES = ['draft', ...REQUEST_STATES] as const

export const InvitationSchema = Type.Object({
  scope_uuid: Uuid,
  scope_name: Type.String(),
  scope_description: Type.String(),
  scope_type: Type.String(),
  scope_image: Nullable(Type.String()),
  customer_uuid: Uuid,
  customer_name: Type.String(),
  role_name: Type.String(),
  role_description: Type.String(),
  created_by_full_name: Nullable(Type.String()),
  created_by_username: Nullable(Type.String()),
  created_by_image: Nullable(Type.String()),
  url: Url,
  uuid: Uuid,
  role: Uuid,
  created: DateTime,
  is_active: Type.Boolean(),
  is_public: Type.Boolean(),
  auto_create_project: Type.Boolean(),
  auto_approve: Type.Boolean(),
  project_name_template: Type.String(),
  project_role: Nullable(Uuid),
  user_affiliations: AnyValue,
  user_email_patterns: AnyValue,
  user_identity_sources: AnyValue,
})
export type Invitation = Static<typeof InvitationSchema>

export const CreateBody = Body({
  role: Type.String({ description: 'uuid of the role to grant' }),
  scope: Type.String({ description: 'URL of the customer or project' }),
  is_public: Type.Optional(Type.Boolean()),
  auto_create_project: Type.Optional(Type.Boolean()),
  auto_approve: Type.Optional(Type.Boolean()),
  project_name_template: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
  project_role: Type.Optional(Nullable(Type.String({ description: 'uuid of a PROJECT.* role' }))),
  user_affiliations: Type.Optional(AnyValue),
  user_email_patterns: Type.Optional(AnyValue),
  user_identity_sources: Type.Optional(AnyValue),
})
export type CreateInput = Static<typeof CreateBody>

export const ProjectItem = Type.Object({ uuid: Uuid, url: Url })
export const PROJECT_ITEM_FIELDS = Object.keys(ProjectItem.properties)
export const ProjectListQuery = ListQuery({})

export const SubmitResult = Type.Object({
  uuid: Uuid,
  scope_name: Type.String(),
  scope_uuid: Uuid,
  auto_approved: Type.Boolean(),
})

export const PermissionRequestSchema = Type.Object({
  uuid: Uuid,
  url: Url,
  invitation: Url,
  invitation_uuid: Uuid,
  state: Type.String({ description: REQUEST_STATES.join(', ') }),
  created_by: Url,
  created_by_username: Type.String(),
  created_by_full_name: Type.String(),
  created_by_email: Type.String(),
  scope_uuid: Uuid,
  scope_name: Type.String(),
  scope_type: Type.String(),
  role_name: Type.String(),
  reviewed_by_username: Nullable(Type.String()),
  reviewed_at: Nullable(DateTime),
  review_comment: Nullable(Type.String()),
  created: DateTime,
  modified: DateTime,
  reviewed_by_full_name: Nullable(Type.String()),
  customer_uuid: Uuid,
  customer_name: Type.String(),
  role_description: Type.String(),
  project_name_template: Type.String({ description: "the invitation's template for auto-created projects" }),
})
export type PermissionRequest = Static<typeof PermissionRequestSchema>

export const ReviewBody = Body({ comment: Type.Optional(Nullable(Type.String())) })
export const CancelRequestResult = Type.Object({ uuid: Uuid, scope_name: Type.String(), scope_uuid: Uuid })
