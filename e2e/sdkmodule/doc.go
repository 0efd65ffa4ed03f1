// Package sdkmodule tests pluginsdk as a vendor sees it: a module of its
// own, outside the kernel's. The test copies the walkthrough of
// docs/vendors/plugins.md into an empty module in a temporary directory, builds it
// against the repository's pluginsdk (a replace directive, GOFLAGS=-mod=mod,
// GOWORK=off, the GOPROXY of the environment), runs its tests under -race
// and checks that its module graph holds none of the kernel's own
// dependencies.
//
// It has no code outside its tests.
package sdkmodule
