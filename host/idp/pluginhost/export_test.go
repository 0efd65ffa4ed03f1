package pluginhost

// Backoff exposes backoff to tests.
var Backoff = backoff
