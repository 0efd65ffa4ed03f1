import { describe, it, expect } from 'vitest'
import { b64urlToBytes, bytesToB64url, creationOptions, requestOptions } from '../src/api/webauthn'

const bytes = (b: ArrayBuffer | BufferSource) => Array.from(new Uint8Array(b as ArrayBuffer))

describe('base64url', () => {
  const cases: [string, number[]][] = [
    ['', []],
    ['AA', [0]],
    ['_-8', [255, 239]],
    ['AQID', [1, 2, 3]],
  ]
  for (const [s, b] of cases) {
    it(`${JSON.stringify(s)} round-trips`, () => {
      expect(bytes(b64urlToBytes(s))).toEqual(b)
      expect(bytesToB64url(new Uint8Array(b))).toBe(s)
    })
  }
})

describe('the kernel options become the API form', () => {
  it('registration: challenge, user id and excluded credentials are bytes', () => {
    const o = creationOptions({
      publicKey: {
        rp: { id: 'localhost', name: 'AK' },
        user: { id: 'AAAAAAAAAAE', name: 'ann', displayName: 'Ann' },
        challenge: 'AQID',
        pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
        excludeCredentials: [{ type: 'public-key', id: 'BAU' }],
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      },
    })
    expect(bytes(o.challenge)).toEqual([1, 2, 3])
    expect(bytes(o.user.id)).toEqual([0, 0, 0, 0, 0, 0, 0, 1])
    expect(o.excludeCredentials!.map((d) => bytes(d.id))).toEqual([[4, 5]])
    expect(o.authenticatorSelection).toEqual({ residentKey: 'required', userVerification: 'required' })
  })
  it('login: bare options; an empty allow list is left out (discoverable)', () => {
    const o = requestOptions({ challenge: 'AQID', rpId: 'localhost', allowCredentials: [], userVerification: 'required' })
    expect(bytes(o.challenge)).toEqual([1, 2, 3])
    expect('allowCredentials' in o).toBe(false)
    const second = requestOptions({ challenge: 'AA', allowCredentials: [{ type: 'public-key', id: 'BAU', transports: ['internal'] }] })
    expect(second.allowCredentials!.map((d) => [bytes(d.id), d.transports])).toEqual([[[4, 5], ['internal']]])
  })
})
