package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/adminkernel/kernel/config"
	"github.com/adminkernel/kernel/host"
	"github.com/adminkernel/kernel/host/database"
	"github.com/adminkernel/kernel/host/logging"
)

// migrateCmd is `adminkernel migrate` (apply the pending migration files),
// `migrate --print [--offline]` and `migrate status`. None of them needs the
// signing key or any other secret: only the database settings are validated
// (config.ValidateDatabase), and --offline connects nowhere.
func migrateCmd(opts *host.Options, load loader) *cobra.Command {
	var print, offline bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the pending schema migrations (--print writes their SQL instead; status lists them)",
		Long: "migrate applies the kernel's pending migration files to the configured database, in order,\n" +
			"recording each in sys_schema_revision, in any environment; a database created before versioned\n" +
			"migrations is adopted at the revision its tables match. It prints what it did.\n\n" +
			"--print writes the SQL of the pending files without changing the database.\n" +
			"--print --offline writes every file of the configured dialect (the full DDL of an empty\n" +
			"database) without connecting anywhere.\n" +
			"`migrate status` lists the applied and pending files.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if offline && !print {
				return errors.New("--offline goes with --print (migrate --print --offline writes the DDL without a database)")
			}
			cfg, err := loadForMigrate(load)
			if err != nil {
				return err
			}
			logs, err := logging.New(cfg.Logging, cfg.ContentRoot, firstWriter(opts.LogOutput, cmd.ErrOrStderr()))
			if err != nil {
				return err
			}
			defer func() { _ = logs.Close() }()
			logWarnings(logs, cfg)
			out := cmd.OutOrStdout()
			switch {
			case print && offline:
				return database.WriteAllMigrations(cfg.Service.Database.DbType, out)
			case print:
				return database.PrintDDL(cmd.Context(), cfg, out)
			}
			db, err := database.Open(cmd.Context(), cfg, logs.For("AdminKernel.Database"))
			if err != nil {
				return err
			}
			defer func() { _ = db.Close() }()
			res, err := db.ApplyMigrations(cmd.Context())
			if err != nil {
				return err
			}
			if _, err = fmt.Fprintln(out, res.String()); err != nil {
				return err
			}
			// The application modules' own tables (Module.Schema).
			tables, err := host.ModuleTables(opts.Modules)
			if err != nil {
				return err
			}
			changed, err := db.ApplyModuleTables(cmd.Context(), tables)
			if err != nil {
				return err
			}
			if len(changed) > 0 {
				_, err = fmt.Fprintf(out, "module tables created or extended: %s\n", strings.Join(changed, ", "))
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&print, "print", false, "write the SQL of the pending migrations to standard output instead of applying them")
	cmd.Flags().BoolVar(&offline, "offline", false, "with --print: write every migration of the configured dialect without connecting to the database")
	cmd.AddCommand(migrateStatusCmd(load))
	return cmd
}

func migrateStatusCmd(load loader) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "List the applied (with time) and pending migration files of the configured database",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadForMigrate(load)
			if err != nil {
				return err
			}
			st, err := database.ReadMigrationStatus(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			newest := st.Current() + len(st.Pending)
			switch {
			case st.Legacy:
				fmt.Fprintf(out, "%s: no revision recorded; the existing tables match revision %d of %d (`adminkernel migrate` records it and applies the rest)\n",
					cfg.Service.Database.DbType, st.Adopt, newest)
			case len(st.Ahead) > 0:
				known := st.Current() - len(st.Ahead)
				fmt.Fprintf(out, "%s: schema at revision %d, newer than this binary's %d; the newer revisions are compatible with it (a rolling upgrade in progress), so it runs\n",
					cfg.Service.Database.DbType, st.Current(), known)
			default:
				fmt.Fprintf(out, "%s: schema at revision %d of %d; %d pending\n", cfg.Service.Database.DbType, st.Current(), newest, len(st.Pending))
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tNAME\tSTATE\tAPPLIED AT (UTC)\tMS")
			for i, r := range st.Applied {
				state := "applied"
				if i >= len(st.Applied)-len(st.Ahead) {
					state = "applied by a newer binary"
				}
				fmt.Fprintf(tw, "%04d\t%s\t%s\t%s\t%d\n", r.Version, r.Name, state, r.AppliedAt.UTC().Format(time.DateTime), r.ExecutionMS)
			}
			for _, f := range st.Adoptable {
				fmt.Fprintf(tw, "%04d\t%s\tpresent, not recorded\t-\t-\n", f.Version, f.Name)
			}
			for _, f := range st.Pending {
				fmt.Fprintf(tw, "%04d\t%s\tpending\t-\t-\n", f.Version, f.Name)
			}
			return tw.Flush()
		},
	}
}

// loadForMigrate loads the settings and validates only the database and
// logging ones.
func loadForMigrate(load loader) (*config.Config, error) {
	cfg, err := load()
	if err != nil {
		return nil, err
	}
	if err := cfg.ValidateDatabase(); err != nil {
		return nil, err
	}
	return cfg, nil
}
