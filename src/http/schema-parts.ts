// Schema pieces records and bodies of several areas are made of.
import { Type, type TLiteral, type TUnion } from '@sinclair/typebox'
import { FreeObject } from './schemas.js'

/** One of a fixed set of strings (a state, a kind): an enum in the document. */
export function OneOf<T extends string>(values: readonly T[]): TUnion<TLiteral<T>[]> {
  return Type.Union(values.map((v) => Type.Literal(v)))
}

/** An object of any keys, its expected keys told in its description. */
export function DescribedObject(description: string): typeof FreeObject {
  return { ...FreeObject, description }
}
