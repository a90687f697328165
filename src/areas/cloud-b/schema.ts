// cloudB records (spec 2.11-2.13): tenants and their networking, floating IPs, routers, migrations.
import { Type, type Static, type TProperties, type TString } from '@sinclair/typebox'
import {
  AnyValue,
  Body,
  DateTime,
  DescribedObject,
  ListQuery,
  Nullable,
  OneOf,
  StringList,
  Url,
  Uuid,
} from '../../http/schemas.js'
import { CloudResourceProps, CommonFilterQuery } from '../cloud/common.js'

export const TYPES = {
  tenant: 'cloudB.Tenant',
  network: 'cloudB.Network',
  subnet: 'cloudB.SubNet',
  port: 'cloudB.Port',
  securityGroup: 'cloudB.SecurityGroup',
  floatingIp: 'cloudB.FloatingIP',
  router: 'cloudB.Router',
} as const

export const PATHS = {
  tenant: 'cloudB-tenants',
  network: 'cloudB-networks',
  subnet: 'cloudB-subnets',
  port: 'cloudB-ports',
  securityGroup: 'cloudB-security-groups',
  floatingIp: 'cloudB-floating-ips',
  router: 'cloudB-routers',
  migration: 'cloudB-migrations',
} as const

const NullableString = Nullable(Type.String())

export const FixedIpSchema = Type.Object({ ip_address: AnyValue, subnet_id: Type.String() })
export const RouteSchema = Type.Object({
  destination: Type.String(),
  nexthop: { ...AnyValue, description: 'an IPv4 or IPv6 address' },
})

/** An object's name, as every create body takes it. */
const Name = Type.String({ minLength: 1, maxLength: 150 })

/** The body of a new object in a tenant or network: the parent's URL, its name and description, then its own fields. */
function childBody<K extends 'tenant' | 'network', P extends TProperties>(
  parent: K,
  own: P,
  description: TString = Type.String(),
) {
  const link = { [parent]: Type.String({ description: `URL of the ${parent}` }) } as Record<K, TString>
  return Body({ ...link, name: Name, description: Type.Optional(description), ...own })
}

const tenantLink = {
  tenant: Url,
  tenant_name: Type.String(),
  tenant_uuid: Uuid,
}

// ---- tenants ----

export const TenantSchema = Type.Object({
  ...CloudResourceProps,
  limits: Type.Record(Type.String(), Type.Number()),
  external_network_id: Type.String(),
  internal_network_id: Type.String(),
  quotas: Type.Array(Type.Object({ name: Type.String(), limit: Type.Number(), usage: Type.Integer() }), {
    description: 'each limit, and the object counts (limit -1: unlimited), with their usage',
  }),
})
export type Tenant = Static<typeof TenantSchema>
export const TENANT_FIELDS = Object.keys(TenantSchema.properties)

export const TenantCreateBody = Body({
  name: Name,
  description: Type.Optional(Type.String()),
  service_settings: Type.String({ description: 'URL of cloudB service settings' }),
  project: Type.String({ description: 'URL of the project' }),
  limits: Type.Optional(Type.Record(Type.String(), Type.Number())),
})
/** PUT sends the whole writable set: name is required (fields left out keep their values). */
export const TenantPutBody = Body({
  name: Name,
  description: Type.Optional(Type.String()),
  limits: Type.Optional(Type.Record(Type.String(), Type.Number())),
})
export const TenantPatchBody = Type.Partial(TenantPutBody, { additionalProperties: false })
export const CreateFloatingIpBody = Body({ description: Type.Optional(Type.String()) })

// ---- networks, subnets ----

export const NetworkSchema = Type.Object({
  ...CloudResourceProps,
  ...tenantLink,
  is_external: Type.Boolean(),
  type: Type.String(),
  segmentation_id: Nullable(Type.Integer()),
  mtu: Nullable(Type.Integer()),
  subnets: Type.Array(
    Type.Object({
      uuid: Uuid,
      url: Url,
      name: Type.String(),
      description: Type.String(),
      cidr: Type.String(),
      gateway_ip: Nullable(AnyValue),
      allocation_pools: Type.Array(Type.Object({ start: AnyValue, end: AnyValue })),
      ip_version: Type.Integer(),
      enable_dhcp: Type.Boolean(),
    }),
  ),
})
export type Network = Static<typeof NetworkSchema>
export const NETWORK_FIELDS = Object.keys(NetworkSchema.properties)
export const NetworkCreateBody = childBody('tenant', {})

export const SubnetSchema = Type.Object({
  ...CloudResourceProps,
  ...tenantLink,
  network: Url,
  network_name: Type.String(),
  network_uuid: Uuid,
  cidr: Type.String(),
  gateway_ip: Nullable(AnyValue),
  ip_version: Type.Integer(),
  allocation_pools: Type.Array(Type.Object({ start: AnyValue, end: AnyValue })),
  dns_nameservers: Type.Array(Type.String()),
  enable_dhcp: Type.Boolean(),
})
export type Subnet = Static<typeof SubnetSchema>
export const SUBNET_FIELDS = Object.keys(SubnetSchema.properties)
export const SubnetCreateBody = childBody('network', {
  cidr: Type.String({ description: 'e.g. 10.0.0.0/24' }),
  gateway_ip: Type.Optional(Nullable(Type.String())),
  dns_nameservers: Type.Optional(StringList),
})

// ---- security groups ----

export const RuleSchema = Type.Object({
  id: Type.Integer(),
  ethertype: { ...AnyValue, description: 'IPv4 or IPv6' },
  direction: { ...AnyValue, description: 'ingress or egress' },
  protocol: { ...AnyValue, description: 'tcp, udp, icmp, or empty for any' },
  from_port: Nullable(Type.Integer({ minimum: 1, maximum: 65535 })),
  to_port: Nullable(Type.Integer({ minimum: 1, maximum: 65535 })),
  cidr: Type.String(),
  description: Type.String(),
  remote_group_name: NullableString,
  remote_group_uuid: Nullable(Uuid),
  remote_group: Nullable(Url),
})
export type Rule = Static<typeof RuleSchema>

export const SecurityGroupSchema = Type.Object({
  ...CloudResourceProps,
  ...tenantLink,
  rules: Type.Array(RuleSchema),
})
export type SecurityGroup = Static<typeof SecurityGroupSchema>
export const SECURITY_GROUP_FIELDS = Object.keys(SecurityGroupSchema.properties)

export const RuleInput = Type.Object(
  {
    ethertype: Type.Optional(Type.String()),
    direction: Type.Optional(Type.String()),
    protocol: Type.Optional(Type.String()),
    from_port: Type.Optional(Nullable(Type.Integer())),
    to_port: Type.Optional(Nullable(Type.Integer())),
    cidr: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
)
export const SecurityGroupCreateBody = childBody('tenant', {
  rules: Type.Optional(Type.Array(RuleInput)),
})

// ---- ports ----

/** The port record of spec 2.12 (as routers embed it). */
export const PortRecordProps = {
  url: Url,
  fixed_ips: Type.Array(FixedIpSchema),
  mac_address: Type.String(),
  subnet: Nullable(Url),
  subnet_uuid: Nullable(Uuid),
  subnet_name: NullableString,
  subnet_description: NullableString,
  subnet_cidr: NullableString,
  allowed_address_pairs: Type.Array(
    Type.Object({ mac_address: Type.String() }, { additionalProperties: true }),
  ),
  device_id: Type.String(),
  device_owner: Type.String(),
  security_groups: Type.Array(SecurityGroupSchema),
}
export const PortRecordSchema = Type.Object(PortRecordProps)
export type PortRecord = Static<typeof PortRecordSchema>

export const PortSchema = Type.Object({
  ...CloudResourceProps,
  ...PortRecordProps,
  ...tenantLink,
  network: Nullable(Url),
  network_uuid: Nullable(Uuid),
  network_name: NullableString,
  runtime_state: Type.String(),
  floating_ips: Type.Array(Url, { description: 'the floating IPs attached to the port' }),
  admin_state_up: Type.Boolean({ description: 'always true: the backend has no disabled ports' }),
  status: Type.String({ description: "the backend's port status (as runtime_state)" }),
})
export type Port = Static<typeof PortSchema>
export const PORT_FIELDS = Object.keys(PortSchema.properties)
export const PortCreateBody = childBody('network', {
  subnet: Type.Optional(Type.String({ description: 'URL of a subnet of the network' })),
  ip_address: Type.Optional(Type.String()),
  security_groups: Type.Optional(StringList),
  allowed_address_pairs: Type.Optional(
    Type.Array(Type.Object({ ip_address: Type.String(), mac_address: Type.Optional(Type.String()) })),
  ),
})

// ---- floating IPs (2.11) ----

export const FloatingIpSchema = Type.Object({
  ...CloudResourceProps,
  runtime_state: Type.String(),
  address: { ...Nullable(Type.String()), description: 'the public IPv4 address' },
  backend_network_id: Type.String(),
  ...tenantLink,
  port: Nullable(Url),
  external_address: Nullable(Type.String()),
  port_fixed_ips: Type.Array(FixedIpSchema),
  instance_uuid: NullableString,
  instance_name: NullableString,
  instance_url: NullableString,
})
export type FloatingIp = Static<typeof FloatingIpSchema>
export const FLOATING_IP_FIELDS = Object.keys(FloatingIpSchema.properties)

/** The filters of every tenant-scoped list: the tenant's URL or uuid. */
const tenantFilterQuery = {
  tenant: Type.Optional(Type.String({ description: 'tenant URL' })),
  tenant_uuid: Type.Optional(Type.String()),
}

export const FloatingIpListQuery = ListQuery({
  ...CommonFilterQuery,
  address: Type.Optional(Type.String()),
  external_ip: Type.Optional(Type.String()),
  free: Type.Optional(Type.String()),
  runtime_state: Type.Optional(Type.String()),
  ...tenantFilterQuery,
})
export const AttachBody = Body({ port: Type.String({ description: 'URL of the port' }) })
/** update_description: a description that is not blank; left out, the description is cleared. */
export const DescriptionBody = Body({ description: Type.Optional(Type.String({ minLength: 1 })) })

// ---- routers (2.12) ----

export const RouterSchema = Type.Object({
  ...CloudResourceProps,
  ...tenantLink,
  routes: Type.Array(RouteSchema),
  fixed_ips: Type.Array(FixedIpSchema),
  ports: Type.Array(PortRecordSchema),
  offering_external_ips: Type.Array(Type.String()),
  has_external_gateway: Type.Boolean(),
  external_fixed_ips: Type.Array(FixedIpSchema, { description: "the router's external gateway addresses" }),
  external_network_uuid: Nullable(Uuid, { description: 'null: the external network is not a record here' }),
  external_network_name: Nullable(Type.String(), {
    description: "the external network's backend name; null without a gateway",
  }),
})
export type Router = Static<typeof RouterSchema>
export const ROUTER_FIELDS = Object.keys(RouterSchema.properties)

export const RouterCreateResult = Type.Object({
  url: Url,
  uuid: Uuid,
  tenant: Url,
  name: Type.String(),
  project: Url,
  service_settings: Url,
})
export const RouterCreateBody = childBody('tenant', {}, Type.String({ maxLength: 4096 }))
export const InterfaceBody = Body({
  subnet: Type.Optional(Type.String({ description: 'URL of a subnet' })),
  port: Type.Optional(Type.String({ description: 'URL of a port' })),
})
export const SetRoutesBody = Body({
  routes: {
    ...Type.Array(Type.Unknown()),
    description: 'list of {destination (CIDR), nexthop (IPv4 or IPv6)}',
  },
})
export const RoutesResult = Type.Object({ routes: Type.Array(RouteSchema) })

/** Lists of tenant-scoped objects: the common filters plus tenant (URL) and tenant_uuid. */
export const TenantScopedListQuery = ListQuery({ ...CommonFilterQuery, ...tenantFilterQuery })
export const TenantListQuery = ListQuery({ ...CommonFilterQuery })

// ---- migrations (2.13) ----

export const MIGRATION_STATES = ['CREATION_SCHEDULED', 'CREATING', 'OK', 'ERRED'] as const
export type MigrationState = (typeof MIGRATION_STATES)[number]

export const MappingsSchema = Type.Object({
  volume_types: Type.Array(Type.Object({ src_type_uuid: Uuid, dst_type_uuid: Uuid })),
  subnets: Type.Array(Type.Object({ src_cidr: Type.String(), dst_cidr: Type.String() })),
  skip_connection_extnet: Type.Boolean(),
  sync_instance_ports: Type.Boolean(),
  networks: Type.Array(Uuid),
})

export const MigrationSchema = Type.Object({
  url: Url,
  uuid: Uuid,
  created: DateTime,
  modified: DateTime,
  name: Type.String(),
  description: Type.String(),
  mappings: MappingsSchema,
  created_by_uuid: Nullable(Uuid),
  created_by_full_name: NullableString,
  src_offering_uuid: Uuid,
  src_offering_name: Type.String(),
  dst_offering_uuid: Uuid,
  dst_offering_name: Type.String(),
  dst_plan_uuid: Nullable(Uuid),
  src_resource_uuid: Uuid,
  src_resource_name: Type.String(),
  dst_resource_uuid: Nullable(Uuid),
  dst_resource_name: NullableString,
  dst_resource_state: NullableString,
  state: OneOf(MIGRATION_STATES),
  error_message: Type.String(),
  error_traceback: Type.String(),
})
export type Migration = Static<typeof MigrationSchema>

const mappingsInput = DescribedObject(
  'volume_types [{src_type_uuid, dst_type_uuid}], subnets [{src_cidr, dst_cidr}], skip_connection_extnet, sync_instance_ports, networks [uuid]',
)

export const MigrationCreateBody = Body({
  name: Type.Optional(Name),
  description: Type.Optional(Type.String({ minLength: 1 })),
  mappings: Type.Optional(mappingsInput),
  src_resource: Type.String({ description: 'uuid of the marketplace resource of the source tenant' }),
  dst_offering: Type.String({ description: 'uuid of the destination offering (CloudB.Tenant)' }),
  dst_plan: Type.String({ description: 'uuid of a plan of the destination offering' }),
})
/** The create result of spec 2.13: mappings and the source resource's uuid, plus the new
 * migration's own uuid and url so a client can follow it. */
export const MigrationCreateResult = Type.Object({
  url: Url,
  uuid: Uuid,
  mappings: MappingsSchema,
  src_resource: Uuid,
})
/** PUT sends the whole writable set: mappings is required (fields left out keep their values). */
export const MigrationPutBody = Body({
  mappings: mappingsInput,
  error_message: Type.Optional(Type.String()),
  error_traceback: Type.Optional(Type.String()),
})
export const MigrationPatchBody = Body({
  mappings: Type.Optional(mappingsInput),
  error_message: Type.Optional(Type.String()),
  error_traceback: Type.Optional(Type.String()),
})
export const MigrationListQuery = ListQuery({
  dst_resource_uuid: Type.Optional(Type.String()),
  src_resource_uuid: Type.Optional(Type.String()),
})
export const MIGRATION_ORDERING = {
  created: 'cloud_b_migrations.created',
  modified: 'cloud_b_migrations.modified',
  state: 'cloud_b_migrations.state',
} as const
