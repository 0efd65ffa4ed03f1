package host_test

import "github.com/adminkernel/kernel/host/kerneltest"

// reauthPassword opens a re-authentication window for the session of
// token with the account's password.
func reauthPassword(k *kerneltest.Kernel, token, pw string) kerneltest.Reply {
	k.T.Helper()
	return k.Do("POST", "/api/v1/auth/reauth", token, map[string]any{"method": "password", "password": pw})
}
