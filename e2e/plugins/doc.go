// Package plugins holds the end-to-end tests of the bundled provider
// plugins: the real plugin binaries, built by the test, launched by a real
// kernel (host/kerneltest) and driven over its HTTP API through whole
// external logins against the faithful vendor fakes of internal/vendorfake,
// including the faults of a plugin process and of a vendor.
//
// It lives outside plugins/ because it imports the kernel: everything under
// plugins/ imports only pluginsdk (enforced by depguard in .golangci.yml).
// It has no code outside its tests.
package plugins
