// cloudB use cases, as the routes and the other parts of the area see them. Each responsibility
// lives in its own file: the resource types and their backend steps (resource-types.ts), importing
// what the backend has (importing.ts), rendering and reading (render.ts), creating objects
// (create.ts) and the actions of floating IPs and routers (actions.ts).
import './resource-types.js'

export {
  ACTION_JOB,
  addRouterInterface,
  attachToPort,
  detachFromPort,
  removeRouterInterface,
  runAction,
  setRoutes,
  unlinkTenantChildren,
  updateFloatingIpDescription,
  updateTenant,
  type ActionPayload,
} from './actions.js'
export {
  createFloatingIp,
  createNetwork,
  createPort,
  createRouter,
  createSecurityGroup,
  createSubnet,
  createTenant,
} from './create.js'
export {
  importTenantObjects,
  pullFloatingIps,
  PULL_FLOATING_IPS_JOB,
  schedulePullFloatingIps,
} from './importing.js'
export { cloudBDriver } from './objects.js'
export { getKind, KINDS, listKind, renderById, tenantFilter, type KindDef } from './render.js'
export { onTenantSettled } from './resource-types.js'
