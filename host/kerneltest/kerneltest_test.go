package kerneltest_test

import (
	"testing"

	"github.com/adminkernel/kernel/host/kerneltest"
)

func TestHarness(t *testing.T) {
	k := kerneltest.Start(t, nil)
	admin := k.Admin()
	k.Do("GET", "/api/v1/ping", admin, nil).Expect(t, "admin ping", 200, 0)
	k.User("eve", "Eve#Pass123", "GET:/api/v1/ping")
	eve := k.Login("eve", "Eve#Pass123")
	k.Do("GET", "/api/v1/ping", eve.AccessToken, nil).Expect(t, "granted ping", 200, 0)
	k.User("mal", "Mal#Pass123")
	mal := k.Login("mal", "Mal#Pass123")
	k.Do("GET", "/api/v1/ping", mal.AccessToken, nil).Expect(t, "ungranted ping", 403, 41001)
}
