// The binding challenge of a bind started by the console (docs/developers/frontend.md
// §3.2–3.3): a verifier kept in sessionStorage, its S256 challenge sent with
// POST {provider}/bind; the callback's ?bindTicket is then completed with
// the verifier. Without WebCrypto (an insecure context) the bind falls back
// to the cookie binding (?bind=).

const KEY = 'ak.bindVerifier'

export function base64url(bytes: Uint8Array): string {
  let bin = ''
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i])
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** newBindChallenge keeps a fresh verifier and answers its challenge, or '' without WebCrypto. */
export async function newBindChallenge(provider: string, store: Storage = sessionStorage): Promise<string> {
  if (typeof crypto === 'undefined' || !crypto.subtle || !crypto.getRandomValues) return ''
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)))
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))
  store.setItem(KEY, JSON.stringify({ provider, verifier }))
  return base64url(new Uint8Array(digest))
}

/** takeBindVerifier answers the kept verifier once (it is removed). */
export function takeBindVerifier(store: Storage = sessionStorage): string {
  const raw = store.getItem(KEY)
  store.removeItem(KEY)
  try {
    return String((JSON.parse(raw ?? 'null') as { verifier?: string } | null)?.verifier ?? '')
  } catch {
    return ''
  }
}
