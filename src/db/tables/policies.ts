// Row types of the tables of cost policies, payment profiles, support.
import type { Generated } from 'kysely'
import type { Bool, Json } from './values.js'

export interface PaymentProfilesTable {
  id: Generated<number>
  uuid: string
  name: string
  organization_id: number
  attributes: Json
  /** fixed_price | invoices | payment_gw_monthly */
  payment_type: string
  is_active: Generated<Bool>
  created: string
  modified: string
}

export interface SupportIssuesTable {
  id: Generated<number>
  uuid: string
  key: string
  summary: string
  description: Generated<string>
  caller_id: number | null
  reporter_id: number | null
  customer_id: number | null
  project_id: number | null
  state: Generated<string>
  resolved: Generated<Bool>
  created: string
  modified: string
}

export interface SupportFeedbacksTable {
  id: Generated<number>
  uuid: string
  issue_id: number
  evaluation: number
  comment: Generated<string>
  state: Generated<string>
  created: string
  modified: string
}

export interface CostPoliciesTable {
  id: Generated<number>
  uuid: string
  offering_id: number
  actions: string
  options: Json
  limit_cost: number
  /** 1 Total, 2 1 month, 3 3 month, 4 12 month */
  period: Generated<number>
  apply_to_all: Generated<Bool>
  has_fired: Generated<Bool>
  fired_datetime: string | null
  recheck_at: string | null
  created_by_id: number | null
  created: string
  modified: string
}

export interface CostPolicyOrganizationGroupsTable {
  policy_id: number
  organization_group_id: number
}

export interface PoliciesTables {
  payment_profiles: PaymentProfilesTable
  support_issues: SupportIssuesTable
  support_feedbacks: SupportFeedbacksTable
  cost_policies: CostPoliciesTable
  cost_policy_organization_groups: CostPolicyOrganizationGroupsTable
}
