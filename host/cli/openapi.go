package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/host"
)

// openapiCmd writes the contract document without running the service.
func openapiCmd(opts *host.Options, load loader) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "openapi",
		Short: "Write the contract document (OpenAPI 3, JSON) without running the service",
		Long: "openapi writes the contract document the service serves at /openapi/v1.json in the\n" +
			"Development environment, byte for byte, to standard output or to --out (mode 0644). It\n" +
			"opens no database and no cache and needs no signing key: of the settings it reads only\n" +
			"what the document depends on (Api:DisabledModules, the external-login callback path).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := load()
			if err != nil {
				return err
			}
			o := *opts
			o.Config = cfg
			doc, err := host.Contract(o)
			if err != nil {
				return err
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(doc)
				return err
			}
			if err := writeFile(out, doc); err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%d bytes)\n", out, len(doc))
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the document to this file (mode 0644) instead of standard output")
	return cmd
}

// writeFile replaces path with body, mode 0644, through a temporary file in
// the same folder, so that a reader never sees half a document.
func writeFile(path string, body []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer func() { _ = os.Remove(name) }()
	if _, err := tmp.Write(body); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(name, path)
}
