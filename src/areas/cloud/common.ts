// What every cloud resource shares (spec 2.9, reference §8), gathered for the cloud areas (cloudA,
// cloudB): the state tokens and lifecycle (lifecycle.ts), the common record (record.ts),
// visibility, permissions and the common filters (access.ts), the generic operations
// (operations.ts) and their HTTP actions (actions.ts).
export {
  CLOUD_STATES,
  CLOUD_STATE_LABELS,
  cloudResourceType,
  registerCloudResourceType,
  type BackendResource,
  type BackendResult,
  type CloudResourceType,
  type CloudState,
  type ResourceOps,
} from './lifecycle.js'
export {
  cloudResourcesBase,
  cloudResourcesRepository,
  COMMON_COLUMNS,
  inScopes,
  oneResource,
  oneResourceParams,
  oneResourceVariant,
  settingsVisibleTo,
  visibleResources,
  type OneResourceWhere,
  type ResourceVisibility,
  type SettingsVisibility,
  type CloudResourcesQuery,
  type CommonFilters,
  type CommonRow,
} from './repository.js'
export { resolveSettingsLink, settingsInfo, settingsVisibility } from './service.js'
export {
  CloudResourceProps,
  CommonFilterQuery,
  COMMON_ORDERING,
  toCommonRecord,
  type CommonRecord,
} from './record.js'
export {
  canManage,
  cloudResourcesQuery,
  commonFilters,
  commonFiltersOf,
  findManageableResource,
  findVisibleResource,
  resolveManagedProject,
  resourceVisibility,
  type CommonFilterValues,
} from './access.js'
export {
  insertResource,
  scheduleDeletion,
  schedulePull,
  scheduleUpdate,
  setResourceState,
  STABLE_STATES,
  unlinkResource,
  UPDATABLE_STATES,
} from './operations.js'
export { lifecycleActions, scheduledDestroy, SetErredBody, StateDetail, stateActions } from './actions.js'
export { visibleWithSettings } from './repository.js'
