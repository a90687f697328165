// Reading an OpenSSH public key line and its fingerprints, as `ssh-keygen -l` prints them.
import { createHash } from 'node:crypto'
import sshpk from 'sshpk'

export interface ParsedKey {
  /** The line as stored: trimmed. */
  publicKey: string
  type: string
  md5: string
  sha256: string
  sha512: string
}

/**
 * The key of a `<type> <base64> [comment]` line, or null when it is not one valid public key
 * (sshpk reads the key's structure and checks its type matches the line's).
 */
export function parsePublicKey(line: string): ParsedKey | null {
  const publicKey = line.trim()
  if (!publicKey || /[\r\n]/.test(publicKey)) return null
  try {
    sshpk.parseKey(publicKey, 'ssh')
  } catch {
    return null
  }
  const [type, body] = publicKey.split(/\s+/) as [string, string]
  const blob = Buffer.from(body, 'base64')
  const md5 = createHash('md5').update(blob).digest('hex')
  return {
    publicKey,
    type,
    md5: md5.match(/../g)!.join(':'),
    sha256: `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`,
    sha512: `SHA512:${createHash('sha512').update(blob).digest('base64').replace(/=+$/, '')}`,
  }
}
