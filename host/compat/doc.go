// Package compat holds the original-UI fixtures: one request/response
// fixture for every operation the original admin UI calls, written from
// the wire contract (shared/reference/wire-contract.md), and the test that
// runs them in order against a real kernel (TestOriginalUIFixtures).
//
// The fixtures live in fixtures/*.json (their format is described in
// fixtures/README.md); fixtures/ui-operations.txt is the list of the
// operations the UI calls. The package has no non-test code besides this
// comment.
package compat
