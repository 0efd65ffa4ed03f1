// Package e2e holds the end-to-end tests of the bundled provider plugins:
// the real plugin binaries, built by the test, launched by a real kernel
// (host/kerneltest) and driven over its HTTP API through whole external
// logins against the faithful vendor fakes of plugins/internal/vendorfake,
// including the faults of a plugin process and of a vendor.
//
// It is the one package under plugins/ that imports the host (the lint
// configuration allows it for this folder only); it has no code outside its
// tests.
package e2e
