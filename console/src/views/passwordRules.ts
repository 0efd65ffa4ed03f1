// The password policy as a list of rules a new password meets or not,
// checked as the kernel checks it (host/auth PasswordPolicy.Check): the
// length in characters (code points), an upper-case letter, a lower-case
// letter, a digit, and a special character (anything else). The kernel
// stays the judge; this only shows the user where they stand.
import type { PasswordPolicy } from '@/api'

export interface PolicyRule {
  key: 'min' | 'upper' | 'lower' | 'digit' | 'special'
  text: string
  met: boolean
}

type T = (key: string, args?: Record<string, unknown>) => string

export function policyRules(p: PasswordPolicy, password: string, t: T): PolicyRule[] {
  let upper = false
  let lower = false
  let digit = false
  let special = false
  let length = 0
  for (const ch of password) {
    length++
    if (/\p{Lu}/u.test(ch)) upper = true
    else if (/\p{Ll}/u.test(ch)) lower = true
    else if (/\p{Nd}/u.test(ch)) digit = true
    else special = true
  }
  const rules: PolicyRule[] = [{ key: 'min', text: t('personal.policy', { min: p.minLength }), met: length >= p.minLength }]
  if (p.requireUpper) rules.push({ key: 'upper', text: t('personal.policyUpper'), met: upper })
  if (p.requireLower) rules.push({ key: 'lower', text: t('personal.policyLower'), met: lower })
  if (p.requireDigit) rules.push({ key: 'digit', text: t('personal.policyDigit'), met: digit })
  if (p.requireSpecial) rules.push({ key: 'special', text: t('personal.policySpecial'), met: special })
  return rules
}
