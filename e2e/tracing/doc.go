// Package tracing holds the end-to-end tests of the kernel's OpenTelemetry
// tracing (docs/operators/operations.md "Tracing"): a real kernel and a real vendor
// plugin binary exporting to an OTLP/HTTP receiver run by the test. It has
// no code outside its tests.
package tracing
