// WebAuthn in the browser (passkeys, docs/design/security.md "Passkeys"): the
// kernel hands out the options in their JSON form (base64url binary
// fields) and takes the credential back as JSON. The conversion is done
// here by hand, so browsers without PublicKeyCredential.parse…FromJSON /
// toJSON work too.

type Json = Record<string, unknown>

export function b64urlToBytes(s: string): ArrayBuffer {
  const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)
  const bin = atob(b64)
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out.buffer
}

export function bytesToB64url(b: ArrayBuffer | ArrayBufferView | null | undefined): string {
  if (!b) return ''
  const u = b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
  let bin = ''
  for (let i = 0; i < u.length; i++) bin += String.fromCharCode(u[i])
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** passkeysSupported: the browser offers WebAuthn (a secure context). */
export function passkeysSupported(): boolean {
  return typeof window !== 'undefined' && !!window.PublicKeyCredential && !!navigator.credentials && window.isSecureContext
}

// The go-webauthn answer is {publicKey: {...}}; accept the bare options too.
function inner(o: unknown): Json {
  const j = (o ?? {}) as Json
  return (j.publicKey as Json) ?? j
}

function descriptors(list: unknown): PublicKeyCredentialDescriptor[] | undefined {
  if (!Array.isArray(list)) return undefined
  return list.map((d: Json) => ({ ...(d as object), type: 'public-key', id: b64urlToBytes(String(d.id)) }) as PublicKeyCredentialDescriptor)
}

/** creationOptions turns the kernel's registration options into the API's form. */
export function creationOptions(o: unknown): PublicKeyCredentialCreationOptions {
  const p = inner(o)
  const user = p.user as Json
  const out = {
    ...p,
    challenge: b64urlToBytes(String(p.challenge)),
    user: { ...user, id: b64urlToBytes(String(user.id)) },
  } as unknown as PublicKeyCredentialCreationOptions
  const ex = descriptors(p.excludeCredentials)
  if (ex) out.excludeCredentials = ex
  else delete (out as unknown as Json).excludeCredentials
  return out
}

/** requestOptions turns the kernel's login options into the API's form. */
export function requestOptions(o: unknown): PublicKeyCredentialRequestOptions {
  const p = inner(o)
  const out = { ...p, challenge: b64urlToBytes(String(p.challenge)) } as unknown as PublicKeyCredentialRequestOptions
  const allow = descriptors(p.allowCredentials)
  if (allow && allow.length) out.allowCredentials = allow
  else delete (out as unknown as Json).allowCredentials
  return out
}

function common(c: PublicKeyCredential): Json {
  return {
    id: c.id,
    rawId: bytesToB64url(c.rawId),
    type: c.type,
    authenticatorAttachment: c.authenticatorAttachment ?? undefined,
    clientExtensionResults: c.getClientExtensionResults ? c.getClientExtensionResults() : {},
  }
}

/** attestationJSON is the registration credential in the kernel's JSON form. */
export function attestationJSON(c: PublicKeyCredential): Json {
  const r = c.response as AuthenticatorAttestationResponse
  return {
    ...common(c),
    response: {
      clientDataJSON: bytesToB64url(r.clientDataJSON),
      attestationObject: bytesToB64url(r.attestationObject),
      transports: typeof r.getTransports === 'function' ? r.getTransports() : [],
    },
  }
}

/** assertionJSON is the login credential in the kernel's JSON form. */
export function assertionJSON(c: PublicKeyCredential): Json {
  const r = c.response as AuthenticatorAssertionResponse
  return {
    ...common(c),
    response: {
      clientDataJSON: bytesToB64url(r.clientDataJSON),
      authenticatorData: bytesToB64url(r.authenticatorData),
      signature: bytesToB64url(r.signature),
      userHandle: r.userHandle ? bytesToB64url(r.userHandle) : undefined,
    },
  }
}

/** createCredential runs a registration ceremony with the kernel's options. */
export async function createCredential(options: unknown): Promise<Json> {
  const c = (await navigator.credentials.create({ publicKey: creationOptions(options) })) as PublicKeyCredential | null
  if (!c) throw new Error('no credential')
  return attestationJSON(c)
}

/** getAssertion runs a login ceremony with the kernel's options. */
export async function getAssertion(options: unknown): Promise<Json> {
  const c = (await navigator.credentials.get({ publicKey: requestOptions(options) })) as PublicKeyCredential | null
  if (!c) throw new Error('no credential')
  return assertionJSON(c)
}

/** cancelled: the user dismissed the browser's dialog (or it timed out). */
export function cancelled(e: unknown): boolean {
  return e instanceof DOMException && (e.name === 'NotAllowedError' || e.name === 'AbortError')
}
