package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

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
			"It prints go test's report and exits non-zero when a check fails. Without a test\n" +
			"vendor, the checks that need a login at the vendor (round trip, subject) are not run:\n" +
			"write a Go test with providertest.LaunchWith for those.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			settings, err := readSettingsFile(settingsFile)
			if err != nil {
				return err
			}
			ok, err := providertest.CheckBinary(args[0], settings)
			if err != nil {
				return err
			}
			if !ok {
				return errors.New("the plugin failed the conformance kit (see the report above)")
			}
			fmt.Fprintln(cmd.OutOrStdout(), "the plugin passed the conformance kit")
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
