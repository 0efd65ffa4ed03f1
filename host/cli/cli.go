// Package cli is the adminkernel command tree (cobra): serve, migrate,
// errors, config, providers, user unlock, new (generators) and version. A business application builds the same tree
// around its own host.Options.
package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/logging"
)

// New returns the root command. opts.Config is filled from the settings
// files and the environment before each subcommand runs.
func New(opts host.Options) *cobra.Command {
	var environment, contentRoot string
	root := &cobra.Command{
		Use:           "adminkernel",
		Short:         "Admin Kernel: a backend kernel for administration applications",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       opts.Version,
	}
	root.PersistentFlags().StringVar(&environment, "environment", "", "environment name (Development, Staging, Production); default $ADMINKERNEL_ENVIRONMENT or Production")
	root.PersistentFlags().StringVar(&contentRoot, "content-root", "", "directory holding appsettings*.json and relative paths (default: the working directory)")

	load := func() (*config.Config, error) {
		dir := contentRoot
		if dir == "" {
			wd, err := os.Getwd()
			if err != nil {
				return nil, err
			}
			dir = wd
		}
		environ := os.Environ()
		return config.Load(config.LoadOptions{
			ContentRoot: dir,
			Environment: config.ResolveEnvironment(environment, environ),
			Environ:     environ,
		})
	}

	root.AddCommand(
		serveCmd(&opts, load),
		migrateCmd(&opts, load),
		errorsCmd(&opts),
		configCmd(load),
		withProvidersTest(ProvidersCmd(load)),
		userCmd(load),
		sessionCmd(load),
		openapiCmd(&opts, load),
		newCmd(),
		versionCmd(&opts),
	)
	return root
}

type loader func() (*config.Config, error)

func serveCmd(opts *host.Options, load loader) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP service until SIGINT or SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := load()
			if err != nil {
				return err
			}
			o := *opts
			o.Config = cfg
			if o.LogOutput == nil {
				o.LogOutput = cmd.ErrOrStderr()
			}
			k, err := host.New(cmd.Context(), o)
			if err != nil {
				return err
			}
			defer k.Close()
			defer reopenOnHangup(cmd.Context(), k)()
			return k.Serve(cmd.Context())
		},
	}
}

func errorsCmd(opts *host.Options) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "errors",
		Short: "Print the error-code catalog (kernel and registered consumer codes)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			catalog, err := host.Catalog(*opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(catalog.Entries())
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "CODE\tNAME\tMSGKEY\tSOURCE")
			for _, e := range catalog.Entries() {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", e.Code, e.Name, e.MsgKey, e.Source)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

func configCmd(load loader) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the effective settings with secrets masked, then every warning and problem serve would report",
		Long: "config loads the settings as serve does, prints the effective tree (secrets masked) on standard\n" +
			"output, the warnings on standard error, and fails listing every problem serve would refuse to\n" +
			"start with (config.Validate, the one check both run). It connects to nothing (no database, no\n" +
			"cache, no plugin) and needs no secret to run (a missing one is reported as a problem).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := load()
			if err != nil {
				return err
			}
			invalid := cfg.Validate() // normalises what it accepts: print the tree serve would run with
			if err := cfg.WriteEffective(cmd.OutOrStdout()); err != nil {
				return err
			}
			for _, w := range cfg.Warnings() {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			if invalid != nil {
				return fmt.Errorf("the settings would not start the service:\n%w", invalid)
			}
			return nil
		},
	}
	cmd.AddCommand(configGetCmd(load), configSetCmd(load))
	return cmd
}

func versionCmd(opts *host.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := opts.Version
			if v == "" {
				v = "dev"
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "adminkernel", v)
			return err
		},
	}
}

// logWarnings logs the settings warnings (config.Warnings: unknown keys
// outside Production, an https ListenAddress) at WARN, as serve does, so
// that every command that runs reports a misspelled key.
func logWarnings(logs *logging.Logs, cfg *config.Config) {
	for _, w := range cfg.Warnings() {
		logs.For("AdminKernel.Config").Warn(w)
	}
}

func firstWriter(ws ...io.Writer) io.Writer {
	for _, w := range ws {
		if w != nil {
			return w
		}
	}
	return os.Stderr
}

// reopenOnHangup reopens the log file (Logging:File) on every SIGHUP until
// ctx ends or the returned stop is called: logrotate's postrotate sends it
// after renaming the file. SIGHUP no longer ends the service.
func reopenOnHangup(ctx context.Context, k *host.Kernel) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-hup:
				_ = k.ReopenLogs() // logged by ReopenLogs
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-finished
	}
}
