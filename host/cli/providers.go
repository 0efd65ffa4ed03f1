package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host/externalauth"
	"github.com/adminkernel/kernel/host/idp"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
)

// ProviderRow is one line of the providers listing.
type ProviderRow struct {
	Code        string `json:"code"`
	DisplayName string `json:"displayName,omitempty"`
	// Source is builtin or plugin.
	Source string `json:"source"`
	// Where is the settings key of a built-in provider or the path of a
	// plugin file (or of the plugin folder).
	Where string `json:"where"`
	// Status is ready, degraded, misconfigured, unconfigured, missing, not
	// launched or skipped (found instead of ready, degraded, misconfigured
	// and not launched with --no-launch).
	Status string `json:"status"`
	PID    int    `json:"pid,omitempty"`
	Pinned bool   `json:"pinned,omitempty"`
	// Detail says why the status is not ready.
	Detail string `json:"detail,omitempty"`
}

// problem reports whether the row fails --check: anything but ready,
// unconfigured and found (a plugin with empty settings is not meant to
// run).
func (r ProviderRow) problem() bool {
	return pluginhost.State(r.Status).Problem()
}

// ProvidersCmd returns the providers command: it registers the built-in
// providers and launches the configured plugins of the plugin folder
// exactly as serve does (verifying names, SHA-256 pins, codes and
// settings), lists every provider with its code, source and status, and
// ends the plugins again. It validates only the settings it uses (the
// external login section and logging): it needs neither the token signing
// key nor a database. Whether a provider is switched on is a runtime
// setting in sys_config (sys.externalauth.<code>.enabled) and is not shown.
func ProvidersCmd(load func() (*config.Config, error)) *cobra.Command {
	var asJSON, noLaunch, check, verbose bool
	cmd := &cobra.Command{
		Use:   "providers",
		Short: "List the external login providers: built-in OIDC instances and plugins, with their status",
		Long: "providers registers the built-in OIDC providers and launches the configured provider plugins\n" +
			"of Service:ExternalAuth:PluginDir the way serve does (file name, SHA-256 pin, code, settings),\n" +
			"prints one line per provider or plugin file, and stops the plugins again. A plugin whose\n" +
			"settings section is empty is unconfigured and not started; a configured plugin without a\n" +
			"binary is missing.\n" +
			"With --no-launch it only reads the settings and the plugin folder.\n" +
			"With --check it exits non-zero unless every configured provider is ready (found, with\n" +
			"--no-launch) and nothing is missing or skipped; unconfigured plugins do not count.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := load()
			if err != nil {
				return err
			}
			if err := cfg.ValidateProviders(); err != nil {
				return err
			}
			log := hclog.NewNullLogger()
			if verbose {
				log = hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: cmd.ErrOrStderr()})
			}
			rows, err := listProviders(cmd.Context(), cfg, !noLaunch, log)
			if err != nil {
				return err
			}
			if err := writeProviders(cmd.OutOrStdout(), rows, asJSON); err != nil {
				return err
			}
			if check {
				var bad []string
				for _, r := range rows {
					switch {
					case !r.problem():
					case r.Code == "":
						bad = append(bad, fmt.Sprintf("%s is %s", r.Where, r.Status))
					default:
						bad = append(bad, fmt.Sprintf("%s (%s) is %s", r.Code, r.Where, r.Status))
					}
				}
				if len(bad) > 0 {
					return fmt.Errorf("providers check failed: %s", strings.Join(bad, "; "))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().BoolVar(&noLaunch, "no-launch", false, "only read the settings and the plugin folder; do not launch plugins")
	cmd.Flags().BoolVar(&check, "check", false, "exit non-zero unless every configured provider is ready and nothing is missing or skipped")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "write the plugin host's log (and the plugins' output) to standard error")
	cmd.AddCommand(providersDescribeCmd(), providersDoctorCmd(load))
	return cmd
}

func listProviders(ctx context.Context, cfg *config.Config, launch bool, log hclog.Logger) ([]ProviderRow, error) {
	opts, err := pluginhost.FromConfig(cfg)
	if err != nil {
		return nil, err
	}
	reg := idp.NewRegistry()
	if err := externalauth.RegisterBuiltins(reg, cfg, nil); err != nil {
		return nil, err
	}
	var plugins []pluginhost.Info
	if launch {
		opts.Logger, opts.Registry = log, reg
		h, err := pluginhost.Load(ctx, opts)
		if err != nil {
			return nil, err
		}
		defer func() { _ = h.Close() }()
		plugins = h.Plugins()
	} else if plugins, err = pluginhost.Inspect(opts); err != nil {
		return nil, err
	}
	// The registry's entries (built-in providers, then the plugins Load
	// registered or recorded), each with its plugin's details; then what
	// the registry does not hold: skipped files, the missing folder, a
	// plugin whose code another provider holds.
	byCode := map[string]pluginhost.Info{}
	for _, p := range plugins {
		if p.Code != "" {
			byCode[p.Code] = p
		}
	}
	var rows []ProviderRow
	listed := map[string]bool{}
	for _, e := range reg.List() {
		var info *pluginhost.Info
		if p, ok := byCode[e.Code]; ok && e.Source.Kind == idp.Plugin && e.Source.Name == p.Path {
			info = &p
			listed[p.Code] = true
		}
		rows = append(rows, entryRow(ctx, e, info))
	}
	for _, p := range plugins {
		if p.Code != "" && listed[p.Code] {
			continue
		}
		rows = append(rows, ProviderRow{Code: p.Code, Source: string(idp.Plugin), Where: p.Path, Status: string(p.State), Pinned: p.Pinned, Detail: p.Reason})
	}
	return rows, nil
}

func entryRow(ctx context.Context, e idp.Entry, info *pluginhost.Info) ProviderRow {
	r := ProviderRow{Code: e.Code, Source: string(e.Source.Kind), Where: e.Source.Name, Status: string(e.Status), Detail: e.Reason}
	if info != nil {
		r.PID, r.Pinned = info.PID, info.Pinned
	}
	if e.Provider == nil {
		return r
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if d, err := e.Provider.Describe(dctx); err == nil {
		r.DisplayName = d.DisplayName
	} else if r.Detail == "" {
		r.Detail = "describe: " + err.Error()
	}
	return r
}

func writeProviders(out io.Writer, rows []ProviderRow, asJSON bool) error {
	if asJSON {
		if rows == nil {
			rows = []ProviderRow{}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CODE\tNAME\tSOURCE\tSTATUS\tPID\tPINNED\tWHERE\tDETAIL")
	for _, r := range rows {
		pid := ""
		if r.PID != 0 {
			pid = strconv.Itoa(r.PID)
		}
		pinned := ""
		if r.Pinned {
			pinned = "sha256"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(r.Code), dash(r.DisplayName), r.Source, r.Status, dash(pid), dash(pinned), r.Where, r.Detail)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
