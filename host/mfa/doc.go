// Package mfa is the kernel's multi-factor area, one routed module: the
// TOTP second factor (seeds encrypted at rest under a key ring, code
// verification with replay refusal, recovery codes: Service), the SMS
// second factor of password logins, passkeys (the WebAuthn relying party
// in host/mfa/passkey), the enrolment of factors, and re-authentication
// (host/mfa/reauth: windows, the +R guard, the high-sensitivity list, the
// administrator's clear).
//
// The second factor of a login has two halves. Gate is what a first
// factor passes (host/auth calls its Challenge through auth.SecondFactor,
// handed in at construction): it decides whether a second factor is
// asked and stores the challenge. Factors completes the challenges (a
// TOTP code, an SMS code, a passkey), logs in without a password
// (passkeys), and enrols and removes factors; it ends a login through the
// login service (Logins, *auth.Service). This package imports host/auth;
// host/auth never imports this package.
//
// Module declares every route of the area (see ModuleName for the module
// names the routes carry).
package mfa
