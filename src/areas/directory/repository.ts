// All SQL of the directory area, one module per group of tables; the services import it from here.
import type { Kysely, Transaction } from 'kysely'
import type { DB } from '../../db/tables.js'

export type Db = Kysely<DB> | Transaction<DB>

/** What a caller may see: everything, or rows tied to these ids. */
export type Visibility =
  { all: true } | { all: false; userId: number; customerIds: number[]; projectIds: number[] }

export * from './user-repository.js'
export * from './customer-repository.js'
export * from './project-repository.js'
export * from './role-repository.js'
