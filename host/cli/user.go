package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/ent"
	"github.com/adminkernel/kernel/ent/schema"
	"github.com/adminkernel/kernel/ent/sysuser"
	"github.com/adminkernel/kernel/host/auth"
	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/mfa"
	"github.com/adminkernel/kernel/host/seed"
	"github.com/adminkernel/kernel/host/user"
)

// maxName is the longest display name (sys_user.name).
const maxName = 64

// reasonCommandReset is written on the sessions reset-password ends.
const reasonCommandReset = "password reset from the command line"

// userCmd is the operator's user maintenance, the break-glass of the login:
// unlock, reset-password, create-superadmin and clear-mfa.
func userCmd(load loader) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "User maintenance from the command line (break-glass)",
	}
	cmd.AddCommand(unlockCmd(load), resetPasswordCmd(load), createSuperAdminCmd(load), clearMfaCmd(load))
	return cmd
}

func unlockCmd(load loader) *cobra.Command {
	return &cobra.Command{
		Use:   "unlock <account>",
		Short: "Clear every login-lockout counter of an account (all clients, and the captcha threshold)",
		Long: "unlock clears the failed-login counters of the account (matched case-insensitively) from\n" +
			"every client, and its account-wide count that requires a captcha, in the shared cache\n" +
			"(Service:Cache:Provider=Redis). With the in-process cache the counters live inside the\n" +
			"running service: restarting it clears them, and this command says so. An account no live\n" +
			"user has is an error (exit status 1), its counters cleared all the same.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			st, err := openStores(cmd, load, true, withIDs)
			if errors.Is(err, errNoSharedCache) {
				return fmt.Errorf("the lockout counters live in the in-process cache of the running service " +
					"(Service:Cache:Provider is not Redis): restart the service to clear them")
			}
			if err != nil {
				return err
			}
			defer st.close()
			started := time.Now()
			defer func() { st.audit(cmd, "user unlock", map[string]any{"account": args[0]}, started, err) }()
			found, err := auth.ClearLockout(cmd.Context(), st.db.Client, st.shared, args[0])
			if err != nil {
				return err
			}
			if !found {
				// A mistyped account is the operator's error: exit non-zero
				// (the counters of that name are cleared all the same, as
				// failed logins of an unknown name are counted too).
				return fmt.Errorf("no live user has the account %q (the lockout counters of that name, if any, were cleared)", strings.TrimSpace(args[0]))
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "unlocked %s: every lockout counter of the account is cleared\n", args[0])
			return err
		},
	}
}

// resetOutput is the --json answer of reset-password.
type resetOutput struct {
	UserID  int64  `json:"userId"`
	Account string `json:"account"`
	// Password is the generated password (absent with --stdin).
	Password           string `json:"password,omitempty"`
	Generated          bool   `json:"generated"`
	MustChangePassword bool   `json:"mustChangePassword"`
	SessionsRevoked    int    `json:"sessionsRevoked"`
	// LockoutCleared is false with the in-process cache (the counters live
	// in the running service).
	LockoutCleared bool `json:"lockoutCleared"`
	// SharedCache tells whether the running replicas' cache was reached
	// (Redis): the ended sessions are refused at once.
	SharedCache bool `json:"sharedCache"`
}

func resetPasswordCmd(load loader) *cobra.Command {
	var fromStdin, asJSON bool
	cmd := &cobra.Command{
		Use:   "reset-password <account>",
		Short: "Set a new password for an account (generated and printed once, or read from stdin) and end its sessions",
		Long: "reset-password sets a new password for the live user with the account (matched\n" +
			"case-insensitively). Without --stdin it generates one that meets the password policy and\n" +
			"prints it once; with --stdin it reads one line from standard input, which must meet the\n" +
			"policy (sys.security.password.*) and, when sys.security.password.historyCount is set, differ\n" +
			"from the current password. Either way the user must choose a new password at the next login\n" +
			"(mustChangePassword). The login lock of the account is cleared and every session of the user\n" +
			"ends: in the database and, with Service:Cache:Provider=Redis, in the shared cache and the\n" +
			"replicas' near copies, so running replicas refuse them at once. With the in-process cache\n" +
			"the command says what a running service still accepts.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			var given string
			if fromStdin {
				pw, err := readPassword(cmd.InOrStdin())
				if err != nil {
					return err
				}
				given = pw
			}
			st, svc, err := openServices(cmd, load, withIDs)
			if err != nil {
				return err
			}
			defer st.close()
			started := time.Now()
			defer func() {
				st.audit(cmd, "user reset-password", map[string]any{"account": args[0], "stdin": fromStdin}, started, err)
			}()
			res, err := auth.ResetPassword(cmd.Context(), auth.ResetDeps{
				Client: st.db.Client, Settings: svc.settings, Hasher: svc.hasher, Sessions: svc.sessions, Store: st.shared,
			}, auth.ResetInput{Account: args[0], Password: given, GenerateLen: seed.GeneratedPasswordLen, Reason: reasonCommandReset})
			if e, ok := errcode.As(err); ok && e.Code == errcode.UserNotFound {
				return fmt.Errorf("no live user has the account %q", strings.TrimSpace(args[0]))
			}
			if err != nil {
				return explain(err)
			}
			st.logs.Root().Info("password reset from the command line", "account", res.Account, "user_id", res.UserID,
				"generated", res.Generated, "sessions_revoked", res.Sessions, "lockout_cleared", res.LockoutCleared)
			out := cmd.OutOrStdout()
			if asJSON {
				o := resetOutput{UserID: res.UserID, Account: res.Account, Generated: res.Generated, MustChangePassword: true,
					SessionsRevoked: res.Sessions, LockoutCleared: res.LockoutCleared, SharedCache: st.shared != nil}
				if res.Generated {
					o.Password = res.Password
				}
				err = writeJSON(out, o)
			} else {
				lock := "login lock cleared"
				if !res.LockoutCleared {
					lock = "login lock left to the running service (in-process cache)"
				}
				_, err = fmt.Fprintf(out, "password of %s (user %d) reset; %d session(s) ended; %s\n", res.Account, res.UserID, res.Sessions, lock)
				if err == nil && res.Generated {
					_, err = fmt.Fprintf(out, "new password (shown only this once): %s\n", res.Password)
				}
				if err == nil {
					_, err = fmt.Fprintln(out, "the user must choose a new password at the next login")
				}
			}
			if st.shared == nil {
				_, _ = fmt.Fprint(cmd.ErrOrStderr(), st.inProcessNote("The password is changed and the sessions are ended")+
					"The login lock counters also live in the running service; a restart clears them.\n")
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "read the new password from the first line of standard input instead of generating one")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// createOutput is the --json answer of create-superadmin.
type createOutput struct {
	UserID             int64  `json:"userId"`
	Account            string `json:"account"`
	Password           string `json:"password,omitempty"`
	Generated          bool   `json:"generated"`
	MustChangePassword bool   `json:"mustChangePassword"`
	// Worker is the snowflake worker id the user's id was generated with.
	Worker int `json:"worker"`
}

func createSuperAdminCmd(load loader) *cobra.Command {
	var fromStdin, asJSON bool
	var name string
	cmd := &cobra.Command{
		Use:   "create-superadmin <account>",
		Short: "Create a super-admin account (password generated and printed once, or read from stdin)",
		Long: "create-superadmin creates an enabled super-admin, as the first one is seeded: the super-admin\n" +
			"flag and no role, in the root org. It refuses an account a live user already has, in any\n" +
			"letter case. Without --stdin the password is generated (it meets the password policy) and\n" +
			"printed once; with --stdin one line of standard input is the password and must meet the\n" +
			"policy. Either way the new super-admin must choose a new password at the first login.\n" +
			"The user's id comes from a snowflake worker id that no running replica uses: with Redis\n" +
			"one is leased like a replica leases one; without Redis it is 63 (62 when the service is\n" +
			"configured with Service:Snowflake:WorkerId 63).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			account := strings.TrimSpace(args[0])
			if !user.ValidAccount(account) {
				return fmt.Errorf("%q is not a valid account: 1 to 64 characters without spaces or control characters", args[0])
			}
			if utf8.RuneCountInString(strings.TrimSpace(name)) > maxName {
				return fmt.Errorf("--name is longer than %d characters", maxName)
			}
			var given string
			if fromStdin {
				pw, err := readPassword(cmd.InOrStdin())
				if err != nil {
					return err
				}
				given = pw
			}
			st, svc, err := openServices(cmd, load, withIDs)
			if err != nil {
				return err
			}
			defer st.close()
			started := time.Now()
			defer func() {
				st.audit(cmd, "user create-superadmin", map[string]any{"account": account, "stdin": fromStdin}, started, err)
			}()
			policy, err := auth.ReadPolicy(cmd.Context(), svc.settings)
			if err != nil {
				return err
			}
			plain := given
			if given == "" {
				if plain, err = policy.Generate(seed.GeneratedPasswordLen); err != nil {
					return err
				}
			} else if err := policy.Check(given); err != nil {
				return explain(err)
			}
			hash, err := svc.hasher.HashContext(cmd.Context(), plain)
			if err != nil {
				return err
			}
			id, err := seed.CreateSuperAdmin(cmd.Context(), st.db.Client, seed.SuperAdmin{
				Account: account, Name: name, PasswordHash: hash, MustChangePassword: true,
			})
			if e, ok := errcode.As(err); ok && e.Code == errcode.AccountExists {
				return fmt.Errorf("a live user already has the account %q (accounts are compared case-insensitively)", account)
			}
			if err != nil {
				return err
			}
			st.logs.Root().Info("super-admin created from the command line", "account", account, "user_id", id,
				"generated", given == "", "worker", st.worker)
			out := cmd.OutOrStdout()
			if asJSON {
				o := createOutput{UserID: id, Account: account, Generated: given == "", MustChangePassword: true, Worker: st.worker}
				if given == "" {
					o.Password = plain
				}
				return writeJSON(out, o)
			}
			if _, err := fmt.Fprintf(out, "super-admin %s created (user %d)\n", account, id); err != nil {
				return err
			}
			if given == "" {
				if _, err := fmt.Fprintf(out, "password (shown only this once): %s\n", plain); err != nil {
					return err
				}
			}
			_, err = fmt.Fprintln(out, "the new super-admin must choose a new password at the first login")
			return err
		},
	}
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "read the password from the first line of standard input instead of generating one")
	cmd.Flags().StringVar(&name, "name", "", "display name (default: the account)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// reasonCommandClearMfa is written on the sessions clear-mfa ends.
const reasonCommandClearMfa = "TOTP and passkeys cleared from the command line"

func clearMfaCmd(load loader) *cobra.Command {
	return &cobra.Command{
		Use:   "clear-mfa <account>",
		Short: "Remove an account's TOTP binding, recovery codes and passkeys and end its sessions",
		Long: "clear-mfa removes the TOTP seed, the recovery codes and the passkeys of the live user with the account\n" +
			"(matched case-insensitively) and ends every session of the user. It is the last resort of a\n" +
			"user (the super-admin included) who lost the authenticator, the recovery codes and the passkeys. When\n" +
			"TOTP is still required of the user (forceTotp, requireForSuperAdmin), the next password login\n" +
			"answers 40020 and the user binds again at /mfa/bind.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			st, svc, err := openServices(cmd, load, withIDs)
			if err != nil {
				return err
			}
			defer st.close()
			started := time.Now()
			defer func() { st.audit(cmd, "user clear-mfa", map[string]any{"account": args[0]}, started, err) }()
			ctx := cmd.Context()
			u, err := st.db.Client.SysUser.Query().
				Where(sysuser.AccountNorm(schema.NormalizeAccount(args[0])), sysuser.IsDelete(false)).
				Only(ctx)
			if ent.IsNotFound(err) {
				return fmt.Errorf("no live user has the account %q", strings.TrimSpace(args[0]))
			}
			if err != nil {
				return err
			}
			if err := mfa.NewWithKeys(st.db.Client, nil, nil).Unbind(ctx, u.ID); err != nil {
				return err
			}
			n, err := svc.sessions.RevokeUser(ctx, u.ID, reasonCommandClearMfa, "")
			if err != nil {
				return err
			}
			st.logs.Root().Info("TOTP and passkeys cleared from the command line", "account", u.Account, "user_id", u.ID, "sessions_revoked", n)
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "TOTP and passkeys of %s (user %d) cleared; %d session(s) ended\n", u.Account, u.ID, n)
			if st.shared == nil {
				_, _ = fmt.Fprint(cmd.ErrOrStderr(), st.inProcessNote("TOTP and passkeys are cleared and the sessions are ended"))
			}
			return err
		},
	}
}
