// Package serve runs a provider as a plugin binary: Serve is the whole
// main function of a vendor's binary,
//
//	func main() { serve.Serve(acme.New) }
//
// It is the SDK's runtime, kept apart from the contract (package
// pluginsdk) so that a provider package, its tests and the kernel's
// in-process providers read the contract without pulling in what only a
// running plugin needs: hashicorp/go-plugin and its handshake, the gRPC
// server of kernel.provider.v1 (the plugin half of the wire, with the
// conversions from the contract's plain types to the generated messages),
// and OpenTelemetry's OTLP exporters (the plugin's own spans when the
// kernel's tracing is on).
//
// The package is named for what main does with it: serve.Serve(provider).
// Only the binary's main package imports it; vendor HTTP calls are traced
// with vendorhttp.TracingTransport, and a plugin's tests serve it with
// providertest.InProcess, which goes through Serve.
package serve
