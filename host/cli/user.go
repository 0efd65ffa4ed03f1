package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/host/auth"
)

// userCmd is the operator's user maintenance: for now only unlock, the
// break-glass of the login lockout.
func userCmd(load loader) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "User maintenance from the command line (break-glass)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "unlock <account>",
		Short: "Clear every login-lockout counter of an account (all clients, and the captcha threshold)",
		Long: "unlock clears the failed-login counters of the account (matched case-insensitively) from\n" +
			"every client, and its account-wide count that requires a captcha, in the shared cache\n" +
			"(Service:Cache:Provider=Redis). With the in-process cache the counters live inside the\n" +
			"running service: restarting it clears them, and this command says so.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStores(cmd, load, true)
			if errors.Is(err, errNoSharedCache) {
				return fmt.Errorf("the lockout counters live in the in-process cache of the running service " +
					"(Service:Cache:Provider is not Redis): restart the service to clear them")
			}
			if err != nil {
				return err
			}
			defer st.close()
			found, err := auth.ClearLockout(cmd.Context(), st.db.Client, st.shared, args[0])
			if err != nil {
				return err
			}
			if found {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "unlocked %s: every lockout counter of the account is cleared\n", args[0])
			} else {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "no live user is named %s; the counters of that name are cleared\n", args[0])
			}
			return err
		},
	})
	return cmd
}
