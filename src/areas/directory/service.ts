// Directory use cases. Other areas call the exported helpers here (resolving a project link the
// caller may see, granting a role, creating a project) instead of touching these tables.

export { visibilityOf } from './access.js'
export * from './user-service.js'
export * from './customer-service.js'
export * from './project-service.js'
export * from './grant-service.js'
