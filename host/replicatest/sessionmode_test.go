//go:build !unit

package replicatest

import (
	"fmt"
	"testing"
)

// TestTwoReplicasSingleMode runs two replicas with
// Service:Security:Session:Mode=Single on one PostgreSQL database and one
// Redis (near cache on): a login on A ends the user's session that B has
// been serving from its near cache, on B's very next request.
func TestTwoReplicasSingleMode(t *testing.T) {
	bin := binary(t)
	settings := sharedSettings(t, "replicatest", "Service__Security__Session__Mode=Single")
	run(t, bin, settings, "migrate", "--environment", "Development")
	a := startReplica(t, bin, "A", freePort(t), settings)
	b := startReplica(t, bin, "B", freePort(t), settings)
	c := newBrowser(t)
	a.waitReady(c)
	b.waitReady(c)
	A, B := a.base, b.base

	for round := range 3 {
		old := c.login(B, "superAdmin", adminPassword)
		// B keeps the session's mark in its near cache.
		for range 3 {
			c.do("GET", B+"/api/v1/ping", old.AccessToken, nil).expect(t, fmt.Sprintf("round %d: ping on B", round), 200, 0)
		}
		fresh := c.login(A, "superAdmin", adminPassword)
		c.do("GET", B+"/api/v1/ping", old.AccessToken, nil).expect(t, fmt.Sprintf("round %d: old session on B after a login on A", round), 401, 40006)
		c.do("POST", B+"/api/v1/auth/refresh", "", map[string]string{"refreshToken": old.RefreshToken}).
			expect(t, fmt.Sprintf("round %d: refresh of the old session on B", round), 200, 40007)
		c.do("GET", B+"/api/v1/ping", fresh.AccessToken, nil).expect(t, fmt.Sprintf("round %d: new session on B", round), 200, 0)
		c.do("GET", A+"/api/v1/ping", fresh.AccessToken, nil).expect(t, fmt.Sprintf("round %d: new session on A", round), 200, 0)
	}
}
