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
//   - drain_test.go: two replicas behind a tiny proxy that follows
//     /health/ready; SIGTERM to one under load: readiness 503 for the drain
//     delay, then a clean exit, and not one request fails.
//   - ha_test.go (build tag hatest, make test-ha): Redis Sentinel and Redis
//     Cluster setups of private redis-server processes; the master is killed
//     under load on two replicas (failover and error windows printed), and
//     the Redis memory per session, authorize state and replica.
//
// They need PostgreSQL (ADMINKERNEL_TEST_POSTGRES), the shared Redis
// (ADMINKERNEL_TEST_REDIS) and redis-server on PATH.
package replicatest
