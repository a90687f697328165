// Row types of the stored answers of POSTs sent with an Idempotency-Key.

export interface IdempotencyKeysTable {
  user_id: number
  idempotency_key: string
  /** sha256 (hex) of the request's method, target and body. */
  request_hash: string
  status: number
  /** The answer's headers worth repeating (Content-Type, Location), as a JSON object. */
  headers: string
  body: string
  created: string
}

export interface IdempotencyTables {
  idempotency_keys: IdempotencyKeysTable
}
