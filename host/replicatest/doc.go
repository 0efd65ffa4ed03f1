// Package replicatest holds the scale-out tests; it has no code of its own.
//
//   - replica_test.go: two real adminkernel processes (the binary built once
//     per run) on different ports sharing one PostgreSQL database and one
//     Redis, driven over HTTP like a load balancer would spread a browser's
//     requests: sessions, logout, force-logout, SSO legs on different
//     replicas, config and permission changes, the one-time ticket under 50
//     parallel exchanges, the change-event relay and the worker-id leases.
//   - sessionmode_test.go: two replicas with Session:Mode=Single; a login
//     on A ends the session B serves from its near cache on B's next
//     request.
//   - outage_test.go: one kernel whose Redis (a private redis-server the
//     test kills and restarts) or PostgreSQL database (connections refused,
//     then allowed again) goes away: readiness, fail-closed SSO and login,
//     recovery without a restart.
//
// They need PostgreSQL (ADMINKERNEL_TEST_POSTGRES), the shared Redis
// (ADMINKERNEL_TEST_REDIS) and redis-server on PATH.
package replicatest
