// Package console holds the built web console (the Vue app in this
// directory, built by `make console` into dist/). The build output is
// committed, so `go build` and `make run` need no Node; host/webconsole
// serves it at /.
package console

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist is the built console: index.html at its root, hashed assets under
// assets/.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil { // "dist" is a valid constant path: cannot happen
		panic(err)
	}
	return sub
}
