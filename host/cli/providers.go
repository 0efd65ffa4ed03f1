package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
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
	// plugin file.
	Where string `json:"where"`
	// Status is ready, degraded, not launched, skipped (or found, with
	// --no-launch).
	Status string `json:"status"`
	PID    int    `json:"pid,omitempty"`
	Pinned bool   `json:"pinned,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// ProvidersCmd returns the providers command: it registers the built-in
// providers and launches the plugins of the plugin folder exactly as serve
// does (verifying names, SHA-256 pins, codes and settings), lists every
// provider with its code, source and status, and ends the plugins again.
// Whether a provider is switched on is a runtime setting in sys_config
// (sys.externalauth.<code>.enabled) and is not shown.
func ProvidersCmd(load func() (*config.Config, error)) *cobra.Command {
	var asJSON, noLaunch, check, verbose bool
	cmd := &cobra.Command{
		Use:   "providers",
		Short: "List the external login providers: built-in OIDC instances and plugins, with their status",
		Long: "providers registers the built-in OIDC providers and launches the provider plugins of\n" +
			"Service:ExternalAuth:PluginDir the way serve does (file name, SHA-256 pin, code, settings),\n" +
			"prints one line per provider or plugin file, and stops the plugins again.\n" +
			"With --no-launch it only lists the files the plugin folder holds.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := load()
			if err != nil {
				return err
			}
			if err := cfg.Validate(); err != nil {
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
				for _, r := range rows {
					if ok := r.Status == string(idp.Ready) || (noLaunch && r.Status == "found"); !ok {
						return fmt.Errorf("provider %s (%s) is %s", dash(r.Code), r.Where, r.Status)
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	cmd.Flags().BoolVar(&noLaunch, "no-launch", false, "only list the plugin folder; do not launch plugins")
	cmd.Flags().BoolVar(&check, "check", false, "exit non-zero when a plugin file is skipped or not launched, or a provider is degraded")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "write the plugin host's log (and the plugins' output) to standard error")
	return cmd
}

func listProviders(ctx context.Context, cfg *config.Config, launch bool, log hclog.Logger) ([]ProviderRow, error) {
	ea := cfg.Service.ExternalAuth
	dir, err := pluginhost.ResolveDir(ea.PluginDir, cfg.ContentRoot)
	if err != nil {
		return nil, err
	}
	reg := idp.NewRegistry()
	if err := externalauth.RegisterBuiltins(reg, cfg); err != nil {
		return nil, err
	}
	var rows []ProviderRow
	if !launch {
		for _, e := range reg.List() {
			rows = append(rows, entryRow(ctx, e, nil))
		}
		found, skipped, err := pluginhost.Discover(dir)
		if err != nil {
			return nil, err
		}
		for _, c := range found {
			_, pinned := ea.PluginSHA256[c.Code]
			rows = append(rows, ProviderRow{Code: c.Code, Source: string(idp.Plugin), Where: c.Path, Status: "found", Pinned: pinned})
		}
		for _, s := range skipped {
			rows = append(rows, ProviderRow{Source: string(idp.Plugin), Where: s.Path, Status: string(pluginhost.Skipped), Detail: s.Reason})
		}
		return rows, nil
	}

	h, err := pluginhost.Load(ctx, pluginhost.Options{
		Dir:      dir,
		SHA256:   ea.PluginSHA256,
		Settings: func(code string) map[string]string { return ea.ProviderSection(code) },
		Logger:   log,
		Registry: reg,
	})
	if err != nil {
		return nil, err
	}
	defer func() { _ = h.Close() }()
	plugins := map[string]pluginhost.Info{}
	var others []pluginhost.Info
	for _, p := range h.Plugins() {
		if p.State == pluginhost.Ready || p.State == pluginhost.Degraded {
			plugins[p.Code] = p
		} else {
			others = append(others, p)
		}
	}
	for _, e := range reg.List() {
		var info *pluginhost.Info
		if p, ok := plugins[e.Code]; ok && e.Source.Kind == idp.Plugin {
			info = &p
		}
		rows = append(rows, entryRow(ctx, e, info))
	}
	for _, p := range others {
		rows = append(rows, ProviderRow{Code: p.Code, Source: string(idp.Plugin), Where: p.Path, Status: string(p.State), Pinned: p.Pinned, Detail: p.Reason})
	}
	return rows, nil
}

func entryRow(ctx context.Context, e idp.Entry, info *pluginhost.Info) ProviderRow {
	r := ProviderRow{Code: e.Code, Source: string(e.Source.Kind), Where: e.Source.Name, Status: string(e.Status)}
	if info != nil {
		r.PID, r.Pinned, r.Detail = info.PID, info.Pinned, info.Reason
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
