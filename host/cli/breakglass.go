package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osuser "os/user"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/host/errcode"
	"github.com/adminkernel/kernel/host/events"
	"github.com/adminkernel/kernel/host/internal/textclip"
	"github.com/adminkernel/kernel/host/oplog"
	"github.com/adminkernel/kernel/host/password"
	"github.com/adminkernel/kernel/host/session"
	"github.com/adminkernel/kernel/host/sysconfig"
)

// maxStdinPassword bounds what readPassword reads: the API's own limit
// (1024 bytes) plus room for the line end; longer input is refused.
const maxStdinPassword = 1024

// readPassword reads the new password from the first line of r (the line
// end, \n or \r\n, is not part of it). An empty line, no line at all or a
// line longer than the API's limit is an error.
func readPassword(r io.Reader) (string, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, maxStdinPassword+3), maxStdinPassword+3)
	line, err := br.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password from standard input: %w", err)
	}
	if !strings.HasSuffix(line, "\n") && len(line) > maxStdinPassword {
		return "", fmt.Errorf("the password on standard input is longer than %d bytes", maxStdinPassword)
	}
	pw := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if pw == "" {
		return "", errors.New("no password on standard input (--stdin reads one line)")
	}
	if len(pw) > maxStdinPassword {
		return "", fmt.Errorf("the password on standard input is longer than %d bytes", maxStdinPassword)
	}
	return pw, nil
}

// services are the kernel services a maintenance command works with, on
// the command's stores.
type services struct {
	settings *sysconfig.Service
	sessions *session.Service
	hasher   *password.PBKDF2
}

// services builds the runtime settings, the session service and the
// password hasher over the stores, configured as the service configures
// them (cache TTL, hashing iterations).
//
// A database without the kernel's tables is refused with what to do.
// openServices is openStores (never requiring the shared cache) followed by
// services: what the commands that change users and sessions start with.
// The caller closes the stores.
func openServices(cmd *cobra.Command, load loader, options ...storeOption) (*stores, *services, error) {
	st, err := openStores(cmd, load, false, options...)
	if err != nil {
		return nil, nil, err
	}
	svc, err := st.services(cmd.Context())
	if err != nil {
		st.close()
		return nil, nil, err
	}
	return st, svc, nil
}

func (s *stores) services(ctx context.Context) (*services, error) {
	ok, err := s.db.HasTables(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("the configured database (Service:Database, %s) has no kernel tables: "+
			"run `adminkernel migrate` or start the service once, then run this command again", s.cfg.Service.Database.DbType)
	}
	store, err := s.cache()
	if err != nil {
		return nil, err
	}
	ttl := time.Duration(s.cfg.Service.Cache.PermissionMinutes) * time.Minute
	next := func() int64 {
		// Revocations create no rows; a command that creates rows opens
		// its stores withIDs and goes through the database's id source.
		panic("cli: the session service created a row")
	}
	registry, err := sysconfig.NewRegistry()
	if err != nil {
		return nil, err
	}
	return &services{
		settings: sysconfig.New(s.db.Client, store, ttl, events.New(), registry, s.logs.For("AdminKernel.Config")),
		sessions: session.New(s.db.Client, store, session.Options{
			CacheTTL: ttl, NextID: next, Log: s.logs.For("AdminKernel.Session"),
		}),
		hasher: password.New(s.cfg.Service.Security.Password.EffectiveIterations()),
	}, nil
}

// inProcessNote is what a command that ends sessions says when the cache is
// the in-process one: the running service's answers are out of its reach.
func (s *stores) inProcessNote(what string) string {
	return fmt.Sprintf("note: Service:Cache:Provider is not Redis, so the running service's cache is out of this "+
		"command's reach. %s in the database: refresh tokens of the ended sessions are refused at once, but a "+
		"running service keeps accepting their access tokens for up to Service:Cache:PermissionMinutes (%d "+
		"minutes) from its cached session marks. Restart the service to make it take effect at once.\n",
		what, s.cfg.Service.Cache.PermissionMinutes)
}

// explain turns a business error into a sentence for the operator: the
// en-US text of its code with the arguments filled in, and the code.
func explain(err error) error {
	e, ok := errcode.As(err)
	if !ok {
		return err
	}
	catalog, cerr := errcode.NewCatalog()
	pack, perr := errcode.LanguagePack("en-US")
	if cerr != nil || perr != nil {
		return err
	}
	text := pack[catalog.MsgKey(e.Code)]
	if text == "" {
		return err
	}
	keys := make([]string, 0, len(e.Args))
	for k := range e.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var details []string
	for _, k := range keys {
		v := fmt.Sprint(e.Args[k])
		if strings.Contains(text, "{"+k+"}") {
			text = strings.ReplaceAll(text, "{"+k+"}", v)
		} else {
			details = append(details, k+"="+v)
		}
	}
	msg := fmt.Sprintf("%s (error code %d", text, e.Code)
	if len(details) > 0 {
		msg += "; " + strings.Join(details, ", ")
	}
	return errors.New(msg + ")")
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// osOperator names the operating-system user running a command:
// os/user.Current, else $USER (or $USERNAME), else "unknown".
func osOperator() string {
	if u, err := osuser.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	for _, v := range []string{"USER", "USERNAME"} {
		if s := strings.TrimSpace(os.Getenv(v)); s != "" {
			return s
		}
	}
	return "unknown"
}

// auditMethod is the http_method of a break-glass row in the operation log.
const auditMethod = "CLI"

// audit writes a break-glass action to the operation log (sys_op_log):
// title "cli.<command>", method CLI, path the command ("adminkernel user
// reset-password"), the parameters (never a password) with the operator's
// OS user as osUser, the outcome, and "adminkernel-cli (os user <name>)"
// as the user agent; no operator id (no kernel user acted). The stores
// must be opened withIDs. A failure to write is reported on stderr and
// does not undo the action.
func (s *stores) audit(cmd *cobra.Command, command string, params map[string]any, started time.Time, actionErr error) {
	who := osOperator()
	p := map[string]any{"osUser": who}
	for k, v := range params {
		if t, ok := v.(string); ok {
			v = textclip.Runes(t, 256)
		}
		p[k] = v
	}
	b, _ := json.Marshal(p)
	js := string(b)
	r := oplog.Row{Time: time.Now(), Title: "cli." + strings.ReplaceAll(command, " ", "."), Method: auditMethod,
		Path: "adminkernel " + command, ParamJSON: &js, Success: actionErr == nil,
		ElapsedMs: time.Since(started).Milliseconds(), IP: "local",
		UserAgent: "adminkernel-cli (os user " + textclip.Runes(who, 128) + ")"}
	if actionErr != nil {
		m := textclip.Runes(actionErr.Error(), 2000)
		r.ResultCode, r.ExceptionMessage = 1, &m
		if e, ok := errcode.As(actionErr); ok {
			r.ResultCode = int(e.Code)
		}
	}
	if err := oplog.EntInserter(s.db.Client).Insert(context.WithoutCancel(cmd.Context()), []oplog.Row{r}); err != nil {
		_, _ = fmt.Fprintf(cmd.ErrOrStderr(), "warning: the action was not written to the operation log: %v\n", err)
	}
}
