// Package ent holds the kernel's ent client, generated from the hand-written
// schema in ./schema. Regenerate with `go generate ./ent`; never edit the
// generated files by hand.
package ent

//go:generate go tool ent generate --feature sql/upsert,sql/lock,sql/execquery,schema/snapshot ./schema
