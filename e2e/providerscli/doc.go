// Package providerscli holds the plugins `make test-providers-cli`
// (scripts/providers-cli.sh) runs the built `adminkernel providers test`
// against, besides a bundled plugin that must pass: two that must fail.
// leaksecret is the code_host plugin with its client secret added to every
// authorization URL (the kit's secret check must catch it); exitnow exits
// at once, before the go-plugin handshake. It has no code of its own.
package providerscli
