// How the tables' columns are typed: booleans are stored as 0/1 integers, timestamps as ISO-8601
// text, JSON as text (SQLite) or jsonb (PostgreSQL): see src/db/values.ts.
export type Json = unknown
export type Bool = number
