// Payment profiles of organizations (spec 2.7 / 4.6, reference §6).
import { Type, type Static } from '@sinclair/typebox'
import { Body, FreeObject, Nullable, OneOf, Url, Uuid } from '../../http/schemas.js'

export const PATH = 'payment-profiles'

export const PAYMENT_TYPES = ['fixed_price', 'invoices', 'payment_gw_monthly'] as const
export type PaymentType = (typeof PAYMENT_TYPES)[number]

/** Labels as the reference renders them (without its stray leading space on the last one). */
export const PAYMENT_TYPE_LABELS: Record<PaymentType, string> = {
  fixed_price: 'Fixed-price contract',
  invoices: 'Monthly invoices',
  payment_gw_monthly: 'Payment gateways (monthly)',
}

export const AttributesSchema = Type.Object(
  {
    end_date: Type.Optional(Nullable(Type.String({ format: 'date' }))),
    agreement_number: Type.Optional(Nullable(Type.String())),
    contract_sum: Type.Optional(Nullable(Type.Integer())),
  },
  { additionalProperties: true },
)
export type Attributes = Static<typeof AttributesSchema>

export const PaymentProfileSchema = Type.Object({
  uuid: Uuid,
  url: Url,
  name: Type.String(),
  organization_uuid: Uuid,
  organization: Url,
  attributes: AttributesSchema,
  payment_type: OneOf(PAYMENT_TYPES),
  payment_type_display: Type.String(),
  is_active: Type.Boolean(),
})
export type PaymentProfile = Static<typeof PaymentProfileSchema>

const writable = {
  name: Type.String({ minLength: 1, maxLength: 150 }),
  organization: Type.String({ description: 'URL of the organization (customer)' }),
  attributes: {
    ...FreeObject,
    description: 'end_date (YYYY-MM-DD), agreement_number (string), contract_sum (integer)',
  } as typeof FreeObject,
  payment_type: Type.String({ description: PAYMENT_TYPES.join(', ') }),
  is_active: Type.Boolean(),
}
export const PaymentProfileCreateBody = Body({
  name: writable.name,
  organization: writable.organization,
  attributes: Type.Optional(writable.attributes),
  payment_type: writable.payment_type,
  is_active: Type.Optional(writable.is_active),
})
/** PATCH: any of the create body's fields. */
export const PaymentProfilePatchBody = Type.Partial(PaymentProfileCreateBody)
export interface PaymentProfileWrite {
  name?: string
  organization?: string
  attributes?: Record<string, unknown>
  payment_type?: string
  is_active?: boolean
}
