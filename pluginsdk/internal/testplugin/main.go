// Command testplugin is a provider plugin for the kernel's own tests: a
// providertest.Fake served with serve.Serve. Built as
// adminkernel-provider-<code>, it reports <code> (so one build serves under
// several names). Two names behave differently: adminkernel-provider-liar
// reports a code that does not match its file name, and
// adminkernel-provider-crashy exits 300 ms after it is configured, and
// adminkernel-provider-chatty prints a line to standard output before the
// go-plugin handshake (which a plugin must never do), adminkernel-provider-
// gaudy declares an icon and a brand the kernel must drop (a URL, a brand
// with a space), and adminkernel-provider-plain declares neither, as a
// plugin built before Descriptor.Brand did. Every
// Exchange is logged ("exchange received") so tests can count calls from
// the host's log. Named after a kind of pluginsdk/internal/mutant (racy,
// changeable_subject, ignores_context) it serves that mutant, which the
// conformance kit must catch.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/internal/mutant"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
	"github.com/adminkernel/kernel/pluginsdk/serve"
)

func main() {
	code := strings.TrimPrefix(filepath.Base(os.Args[0]), "adminkernel-provider-")
	switch code {
	case "liar":
		code = "someone_else"
	case "chatty":
		// Standard output belongs to the handshake: the host reads this
		// line where it expects go-plugin's.
		fmt.Println("chatty plugin: hello before the handshake")
	}
	serve.Serve(func(log hclog.Logger) pluginsdk.Provider {
		f := providertest.NewFake(code)
		f.OnExchange = func(c string) { log.Info("exchange received", "code", c) }
		log.Debug("test plugin started", "code", code)
		switch code {
		case "crashy":
			return crashy{f}
		case "gaudy":
			return decorated{f, "https://cdn.example/gaudy.svg", "Gaudy Brand"}
		case "plain":
			return decorated{f, "", ""}
		}
		if slices.Contains(mutant.Kinds, code) {
			return mutant.New(code, f)
		}
		return f
	})
}

// crashy exits soon after every Configure.
type crashy struct{ *providertest.Fake }

func (c crashy) Configure(ctx context.Context, s pluginsdk.Settings) error {
	time.AfterFunc(300*time.Millisecond, func() { os.Exit(3) })
	return c.Fake.Configure(ctx, s)
}

// decorated replaces the fake's icon and brand.
type decorated struct {
	*providertest.Fake
	icon, brand string
}

func (d decorated) Describe(ctx context.Context) (pluginsdk.Descriptor, error) {
	desc, err := d.Fake.Describe(ctx)
	desc.Icon, desc.Brand = d.icon, d.brand
	return desc, err
}
