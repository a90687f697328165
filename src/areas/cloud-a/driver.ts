// The cloudA backend interface and its emulator. A real provider implements CloudADriver and
// registers itself with registerDriver('cloudA', '<name>', factory); service settings select it
// with options.driver.
import { BackendError, EmulatorBase, emulatedIpv4, registerDriver, type DriverCall } from '../cloud/driver.js'

export interface PublicIpSpec {
  name: string
  description: string
  /** backend name of the location */
  location: string
  /** name of the resource group */
  resource_group: string
}

export interface BackendPublicIp {
  backend_id: string
  name: string
  ip_address: string
}

export interface CloudADriver {
  createPublicIp(spec: PublicIpSpec): Promise<BackendPublicIp>
  updatePublicIp(backendId: string, spec: PublicIpSpec): Promise<BackendPublicIp>
  deletePublicIp(backendId: string): Promise<void>
  /** Optional: drivers without it make the pull endpoint answer 409. null: gone on the backend. */
  pullPublicIp?(backendId: string): Promise<BackendPublicIp | null>
}

interface StoredPublicIp extends PublicIpSpec {
  ip_address: string
}

const PUBLIC_IP = 'public_ip'

/** The in-process cloudA: public IPs with deterministic ids and addresses, kept in the database. */
export class CloudAEmulator extends EmulatorBase implements CloudADriver {
  async createPublicIp(spec: PublicIpSpec): Promise<BackendPublicIp> {
    await this.step('create_public_ip')
    const backendId = await this.nextId('public-ip')
    const ip = emulatedIpv4(await this.nextNumber('ipv4'))
    await this.putObject(PUBLIC_IP, backendId, { ...spec, ip_address: ip } satisfies StoredPublicIp)
    return { backend_id: backendId, name: spec.name, ip_address: ip }
  }

  /** cloudA's wording of an object it does not have. */
  protected override missing(what: string, id: string): BackendError {
    return new BackendError(`${what} ${id} does not exist.`)
  }

  async updatePublicIp(backendId: string, spec: PublicIpSpec): Promise<BackendPublicIp> {
    const current = await this.modify<StoredPublicIp>(
      'update_public_ip',
      PUBLIC_IP,
      backendId,
      'Public IP',
      (o) => {
        Object.assign(o, spec)
      },
    )
    return { backend_id: backendId, name: spec.name, ip_address: current.ip_address }
  }

  async deletePublicIp(backendId: string): Promise<void> {
    await this.step('delete_public_ip')
    // Deleting what is already gone succeeds, as cloud APIs answer a repeated delete.
    await this.deleteObject(PUBLIC_IP, backendId)
  }

  async pullPublicIp(backendId: string): Promise<BackendPublicIp | null> {
    await this.step('pull_public_ip')
    const current = await this.getObject<StoredPublicIp>(PUBLIC_IP, backendId)
    return current ? { backend_id: backendId, name: current.name, ip_address: current.ip_address } : null
  }
}

/** The emulator without pull: for installations (and tests) whose backend cannot be read back. */
export function emulatorWithoutPull(call: DriverCall): CloudADriver {
  const d = new CloudAEmulator(call)
  return {
    createPublicIp: (spec) => d.createPublicIp(spec),
    updatePublicIp: (id, spec) => d.updatePublicIp(id, spec),
    deletePublicIp: (id) => d.deletePublicIp(id),
  }
}

registerDriver<CloudADriver>('cloudA', 'emulator', (call: DriverCall) => new CloudAEmulator(call))
registerDriver<CloudADriver>('cloudA', 'emulator-no-pull', emulatorWithoutPull)
