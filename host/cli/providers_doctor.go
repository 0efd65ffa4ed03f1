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
	"github.com/adminkernel/kernel/host/idp/doctor"
	"github.com/adminkernel/kernel/host/idp/pluginhost"
)

// providersDescribeCmd is providers describe <binary>: it starts a plugin
// binary without configuring it and prints its descriptor and protocol
// versions (as Packer's describe).
func providersDescribeCmd() *cobra.Command {
	var asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "describe <binary>",
		Short: "Start a provider plugin binary, print its descriptor and protocol versions, and stop it (no settings are sent)",
		Long: "describe starts the plugin binary the way the kernel does (gRPC, mutual TLS, no inherited\n" +
			"environment), asks it for its descriptor and stops it. It sends no settings and needs no\n" +
			"configuration: use it to see what a binary is before installing and pinning it. The SHA-256\n" +
			"it prints is the value of Service:ExternalAuth:PluginSha256:<code>. PROBLEMS lists what would\n" +
			"keep the plugin host from launching it from the plugin folder; any problem exits non-zero.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			log := hclog.NewNullLogger()
			if verbose {
				log = hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: cmd.ErrOrStderr()})
			}
			d, err := pluginhost.DescribeBinary(cmd.Context(), args[0], log)
			if err != nil {
				return err
			}
			if err := writeDescription(cmd.OutOrStdout(), d, asJSON); err != nil {
				return err
			}
			if len(d.Problems) > 0 {
				return fmt.Errorf("%s: %s", d.Path, strings.Join(d.Problems, "; "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "write the plugin's output to standard error")
	return cmd
}

func writeDescription(out io.Writer, d pluginhost.Description, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
	versions := make([]string, len(d.KernelVersions))
	for i, v := range d.KernelVersions {
		versions[i] = strconv.Itoa(v)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "PATH\t%s\n", d.Path)
	fmt.Fprintf(tw, "SHA256\t%s\n", d.SHA256)
	fmt.Fprintf(tw, "CODE\t%s\n", dash(d.Code))
	fmt.Fprintf(tw, "NAME\t%s\n", dash(d.DisplayName))
	fmt.Fprintf(tw, "ICON\t%s\n", dash(d.Icon))
	fmt.Fprintf(tw, "BRAND\t%s\n", dash(d.Brand))
	fmt.Fprintf(tw, "PROTOCOL\t%d (negotiated %d; the kernel speaks %s)\n", d.ProtocolVersion, d.NegotiatedVersion, strings.Join(versions, ", "))
	problems := "-"
	if len(d.Problems) > 0 {
		problems = strings.Join(d.Problems, "; ")
	}
	fmt.Fprintf(tw, "PROBLEMS\t%s\n", problems)
	if len(d.Warnings) > 0 {
		fmt.Fprintf(tw, "WARNINGS\t%s\n", strings.Join(d.Warnings, "; "))
	}
	return tw.Flush()
}

// providersDoctorCmd is providers doctor <code>: the setup doctor of one
// provider, as POST /api/v1/auth/external/{code}/doctor runs it.
func providersDoctorCmd(load func() (*config.Config, error)) *cobra.Command {
	var asJSON, verbose bool
	cmd := &cobra.Command{
		Use:   "doctor <code>",
		Short: "Check one provider's setup: status, settings, vendor hosts, credentials, the redirect URI to register",
		Long: "doctor registers the providers and launches the configured plugins as providers does, then\n" +
			"checks one provider: its status, the shape of its settings, that the vendor hosts resolve and\n" +
			"answer, that the vendor accepts the credentials where it offers a harmless check (WeCom\n" +
			"gettoken, the DingTalk app token, GitHub and WeChat with a made-up code), for OIDC the\n" +
			"discovery document, its issuer and the key set; and it prints the redirect URI and trusted\n" +
			"domain to register with the vendor. No secret is printed. It exits non-zero when a check fails.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			rep, err := runDoctor(cmd.Context(), cfg, args[0], log)
			if err != nil {
				return err
			}
			if err := writeReport(cmd.OutOrStdout(), rep, asJSON); err != nil {
				return err
			}
			if rep.Result == doctor.Fail {
				return fmt.Errorf("provider %s: a setup check failed", rep.Code)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "write the plugin host's log to standard error")
	return cmd
}

func runDoctor(ctx context.Context, cfg *config.Config, code string, log hclog.Logger) (doctor.Report, error) {
	opts, err := pluginhost.FromConfig(cfg)
	if err != nil {
		return doctor.Report{}, err
	}
	reg := idp.NewRegistry()
	if err := externalauth.RegisterBuiltins(reg, cfg, nil); err != nil {
		return doctor.Report{}, err
	}
	opts.Logger, opts.Registry = log, reg
	h, err := pluginhost.Load(ctx, opts)
	if err != nil {
		return doctor.Report{}, err
	}
	defer func() { _ = h.Close() }()
	e, ok := reg.Get(code)
	if !ok {
		return doctor.Report{}, fmt.Errorf("no provider has the code %q (adminkernel providers lists them)", code)
	}
	redirect, problem := "", "Service:ExternalAuth:CallbackBaseUrl is not set"
	if base := strings.TrimRight(cfg.Service.ExternalAuth.CallbackBaseURL, "/"); base != "" {
		redirect, problem = base+externalauth.CallbackPath+"/"+e.Code+"/callback", ""
	}
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return (&doctor.Doctor{}).Run(dctx, externalauth.DoctorTarget(e, cfg, redirect, problem)), nil
}

func writeReport(out io.Writer, rep doctor.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(out, "provider %s (%s, %s): %s\n", rep.Code, rep.Source, rep.Status, strings.ToUpper(string(rep.Result)))
	if rep.RedirectURI != "" {
		fmt.Fprintf(out, "redirect URI:   %s\ntrusted domain: %s\n", rep.RedirectURI, rep.TrustedDomain)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tCHECK\tMESSAGE")
	for _, c := range rep.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", strings.ToUpper(string(c.Result)), c.Name, c.Message)
		if c.Hint != "" {
			fmt.Fprintf(tw, "\t\thint: %s\n", c.Hint)
		}
	}
	return tw.Flush()
}
