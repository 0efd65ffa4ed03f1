package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/ent/sysuser"
)

// Reasons written on the sessions `session revoke` ends.
const (
	reasonCommandUser = "revoked from the command line"
	reasonCommandAll  = "all sessions revoked from the command line"
)

// revokeOutput is the --json answer of session revoke.
type revokeOutput struct {
	// Scope is "user" or "all".
	Scope   string `json:"scope"`
	Account string `json:"account,omitempty"`
	UserID  int64  `json:"userId,omitempty"`
	Revoked int    `json:"revoked"`
	// SharedCache tells whether the running replicas' cache was reached
	// (Redis): the ended sessions are refused at once.
	SharedCache bool `json:"sharedCache"`
}

// sessionCmd is the operator's session maintenance.
func sessionCmd(load loader) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Session maintenance from the command line (break-glass)",
	}
	cmd.AddCommand(revokeCmd(load))
	return cmd
}

func revokeCmd(load loader) *cobra.Command {
	var account string
	var all, yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "revoke (--user <account> | --all --yes)",
		Short: "End the sessions of one user, or every session",
		Long: "revoke ends the active sessions of the live user with the account (--user, matched\n" +
			"case-insensitively) or of everyone (--all, which asks for --yes), and reports how many.\n" +
			"The sessions are revoked in the database; with Service:Cache:Provider=Redis their marks\n" +
			"in the shared cache and the replicas' near copies are replaced before the command\n" +
			"returns, so every running replica refuses their access and refresh tokens at once. With\n" +
			"the in-process cache the refresh tokens are refused at once and the command says how long\n" +
			"a running service keeps accepting the access tokens.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			account = strings.TrimSpace(account)
			switch {
			case all && account != "":
				return errors.New("give either --user <account> or --all, not both")
			case !all && account == "":
				return errors.New("give --user <account> or --all")
			case all && !yes:
				return errors.New("--all ends every session of every user: add --yes to confirm")
			}
			st, svc, err := openServices(cmd, load, withIDs)
			if err != nil {
				return err
			}
			defer st.close()
			started := time.Now()
			defer func() {
				st.audit(cmd, "session revoke", map[string]any{"account": account, "all": all}, started, err)
			}()
			o := revokeOutput{Scope: "all", SharedCache: st.shared != nil}
			if all {
				o.Revoked, err = svc.sessions.RevokeAll(cmd.Context(), reasonCommandAll)
			} else {
				o.Scope = "user"
				u, qerr := st.db.Client.SysUser.Query().
					Where(sysuser.AccountNorm(schema.NormalizeAccount(account)), sysuser.IsDelete(false)).
					Only(cmd.Context())
				if ent.IsNotFound(qerr) {
					return fmt.Errorf("no live user has the account %q", account)
				}
				if qerr != nil {
					return qerr
				}
				o.Account, o.UserID = u.Account, u.ID
				o.Revoked, err = svc.sessions.RevokeUser(cmd.Context(), u.ID, reasonCommandUser, "")
			}
			if err != nil {
				return err
			}
			st.logs.Root().Info("sessions revoked from the command line", "scope", o.Scope, "account", o.Account,
				"user_id", o.UserID, "revoked", o.Revoked)
			out := cmd.OutOrStdout()
			if asJSON {
				err = writeJSON(out, o)
			} else if all {
				_, err = fmt.Fprintf(out, "%d session(s) ended\n", o.Revoked)
			} else {
				_, err = fmt.Fprintf(out, "%d session(s) of %s (user %d) ended\n", o.Revoked, o.Account, o.UserID)
			}
			if st.shared == nil {
				_, _ = fmt.Fprint(cmd.ErrOrStderr(), st.inProcessNote("The sessions are ended"))
			}
			return err
		},
	}
	cmd.Flags().StringVar(&account, "user", "", "end the sessions of this account")
	cmd.Flags().BoolVar(&all, "all", false, "end every session of every user (needs --yes)")
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm --all")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
