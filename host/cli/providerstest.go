package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/pluginsdk"
	"github.com/adminkernel/kernel/pluginsdk/providertest"
)

// withProvidersTest adds `providers test` to the providers command.
func withProvidersTest(providers *cobra.Command) *cobra.Command {
	providers.AddCommand(providersTestCmd())
	return providers
}

// providersTestCmd is `adminkernel providers test <binary> --settings
// file`: the SDK's conformance kit (providertest.CheckBinary) against a
// built plugin binary, started as the kernel starts plugins, for vendors
// who do not write Go tests. It needs no kernel configuration.
func providersTestCmd() *cobra.Command {
	var settingsFile string
	cmd := &cobra.Command{
		Use:   "test <plugin binary>",
		Short: "Run the SDK's conformance kit against a provider plugin binary",
		Long: "test starts the plugin binary the way the kernel does (go-plugin handshake, gRPC,\n" +
			"mutual TLS, an empty environment; the binary must be named adminkernel-provider-<code>\n" +
			"and report that code), configures it with the settings file (a JSON object: the\n" +
			"provider's settings section, e.g. {\"ClientId\": \"...\", \"ClientSecret\": \"...\"}) and\n" +
			"runs every check of pluginsdk/providertest against it, a fresh process per check.\n" +
			"It prints each check's name and result (with the failures and the plugin's warnings),\n" +
			"then the number of checks run and passed, and exits non-zero when a check fails or\n" +
			"none ran. Without a test vendor, the checks that need a login at the vendor (round\n" +
			"trip, subject) are not run: write a Go test with providertest.LaunchWith for those.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			settings, err := readSettingsFile(settingsFile)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			rep, err := providertest.CheckBinary(args[0], settings, func(r providertest.Result) { printResult(out, r) })
			if err != nil {
				return err
			}
			run, passed := rep.Run(), rep.Passed()
			fmt.Fprintf(out, "%d checks run, %d passed, %d failed\n", run, passed, run-passed)
			switch {
			case run == 0:
				return errors.New("no check ran: the conformance kit checked nothing")
			case !rep.OK():
				return fmt.Errorf("the plugin failed the conformance kit: %d of %d checks failed (see the report above)", run-passed, run)
			}
			fmt.Fprintf(out, "the plugin passed the conformance kit (%d checks)\n", run)
			return nil
		},
	}
	cmd.Flags().StringVar(&settingsFile, "settings", "", "a JSON file holding the provider's settings section (required)")
	_ = cmd.MarkFlagRequired("settings")
	return cmd
}

// readSettingsFile reads a settings section: a JSON object whose values are
// strings, numbers or booleans (as in appsettings.json).
func readSettingsFile(path string) (pluginsdk.Settings, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object: %w", path, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("%s: not a JSON object", path)
	}
	s := pluginsdk.Settings{}
	for k, v := range obj {
		switch v := v.(type) {
		case string:
			s[k] = v
		case float64:
			s[k] = strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			s[k] = strconv.FormatBool(v)
		case nil:
			s[k] = ""
		default:
			return nil, fmt.Errorf("%s: the value of %q is not a string, number or boolean", path, k)
		}
	}
	return s, nil
}

// printResult prints one check's result as go test -v would: a PASS or
// FAIL line for the check (a parent only when it failed on its own), its
// output indented below.
func printResult(w io.Writer, r providertest.Result) {
	if !r.Counted() {
		return
	}
	verdict := "PASS"
	if !r.Passed {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "--- %s: %s (%.2fs)\n", verdict, r.Name, r.Duration.Seconds())
	for _, line := range r.Output {
		for l := range strings.SplitSeq(line, "\n") {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}
