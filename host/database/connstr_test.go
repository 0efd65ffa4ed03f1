package database

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/adminkernel/kernel/config"
)

func TestSqliteSource(t *testing.T) {
	tests := []struct {
		name    string
		conn    string
		want    string
		wantErr string
	}{
		{name: "default", conn: "Data Source=./data/adminkernel.db", want: "./data/adminkernel.db"},
		{name: "lower-case key", conn: "data source=app.db", want: "app.db"},
		{name: "upper-case key", conn: "DATA SOURCE=app.db", want: "app.db"},
		{name: "spaces around", conn: "  Data Source = app.db ;", want: "app.db"},
		{name: "extra blanks in key", conn: "Data   Source=app.db", want: "app.db"},
		{name: "DataSource", conn: "DataSource=app.db", want: "app.db"},
		{name: "Filename", conn: "Filename=/var/lib/ak/app.db", want: "/var/lib/ak/app.db"},
		{name: "other parts ignored", conn: "Mode=ReadWriteCreate;Data Source=x/app.db;Cache=Shared;Foreign Keys=True", want: "x/app.db"},
		{name: "quoted value", conn: "Data Source='dir;with;semicolons/app.db';Cache=Shared", want: "dir;with;semicolons/app.db"},
		{name: "double-quoted value", conn: `Data Source="my app.db"`, want: "my app.db"},
		{name: "plain relative path", conn: "data/app.db", want: "data/app.db"},
		{name: "plain absolute path", conn: "/srv/ak/app.db", want: "/srv/ak/app.db"},
		{name: "plain path with spaces", conn: "  my data/app.db  ", want: "my data/app.db"},
		{name: "plain path containing =", conn: "data/a=b.db", want: "data/a=b.db"},
		{name: "memory", conn: ":memory:", want: ":memory:"},
		{name: "memory as data source", conn: "Data Source=:memory:", want: ":memory:"},
		{name: "empty", conn: "  ", wantErr: "empty"},
		{name: "no data source", conn: "Mode=Memory;Cache=Shared", wantErr: "Data Source"},
		{name: "empty data source", conn: "Data Source=;Cache=Shared", wantErr: "empty Data Source"},
		{name: "unterminated quote", conn: "Data Source='app.db", wantErr: "unterminated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sqliteSource(tt.conn)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("sqliteSource(%q) error = %v, want containing %q", tt.conn, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("sqliteSource(%q): %v", tt.conn, err)
			}
			if got != tt.want {
				t.Fatalf("sqliteSource(%q) = %q, want %q", tt.conn, got, tt.want)
			}
		})
	}
}

func TestResolveSqlitePath(t *testing.T) {
	root := t.TempDir()
	abs := filepath.Join(t.TempDir(), "abs.db")
	tests := []struct {
		name, path, root, want string
	}{
		{"relative against content root", "./data/app.db", root, filepath.Join(root, "data", "app.db")},
		{"relative with parent", "../x.db", filepath.Join(root, "sub"), filepath.Join(root, "x.db")},
		{"absolute kept", abs, root, abs},
		{"memory kept", ":memory:", root, ":memory:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveSqlitePath(tt.path, tt.root)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("resolveSqlitePath(%q, %q) = %q, want %q", tt.path, tt.root, got, tt.want)
			}
		})
	}
}

func TestSqliteDSN(t *testing.T) {
	tests := []struct {
		path, wantPrefix string
	}{
		{"/srv/ak/app.db", "file:/srv/ak/app.db?"},
		{"/srv/a?b#c%d.db", "file:/srv/a%3fb%23c%25d.db?"},
		{":memory:", "file::memory:?"},
	}
	for _, tt := range tests {
		got := SqliteDSN(tt.path)
		if !strings.HasPrefix(got, tt.wantPrefix) {
			t.Errorf("SqliteDSN(%q) = %q, want prefix %q", tt.path, got, tt.wantPrefix)
		}
		for _, p := range []string{"_pragma=foreign_keys(1)", "_pragma=journal_mode(WAL)", "_pragma=synchronous(NORMAL)", "_pragma=busy_timeout(5000)", "_txlock=immediate", "_time_format=sqlite", "_timezone=UTC"} {
			if !strings.Contains(got, p) {
				t.Errorf("SqliteDSN(%q) = %q lacks %s", tt.path, got, p)
			}
		}
	}
}

// TestOpenSqliteFile opens real files through the connection-string forms and
// checks where the file lands, that the directory is created, and that the
// pragmas are in effect.
func TestOpenSqliteFile(t *testing.T) {
	tests := []struct {
		name string
		conn func(root string) string
		want func(root string) string
	}{
		{
			name: "default Data Source relative to content root",
			conn: func(string) string { return "Data Source=./data/adminkernel.db" },
			want: func(root string) string { return filepath.Join(root, "data", "adminkernel.db") },
		},
		{
			name: "plain relative path, nested directories created",
			conn: func(string) string { return "a/b/c/app.db" },
			want: func(root string) string { return filepath.Join(root, "a", "b", "c", "app.db") },
		},
		{
			name: "Data Source with other parts",
			conn: func(string) string { return "Cache=Shared; data source = x.db ;Mode=ReadWriteCreate" },
			want: func(root string) string { return filepath.Join(root, "x.db") },
		},
		{
			name: "absolute path outside the content root",
			conn: func(string) string { return "" }, // replaced below
			want: nil,
		},
		{
			name: "empty connection string uses the default",
			conn: func(string) string { return "" },
			want: func(root string) string { return filepath.Join(root, "data", "adminkernel.db") },
		},
	}
	other := t.TempDir()
	tests[3].conn = func(string) string { return "Data Source=" + filepath.Join(other, "deep", "abs.db") }
	tests[3].want = func(string) string { return filepath.Join(other, "deep", "abs.db") }

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			cfg := config.Defaults()
			cfg.ContentRoot = root
			cfg.Service.Database.ConnectionString = config.Secret(tt.conn(root))
			db, err := Open(context.Background(), &cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			want := tt.want(root)
			if db.Target != want {
				t.Errorf("Target = %q, want %q", db.Target, want)
			}
			if _, err := db.SQL.ExecContext(context.Background(), "CREATE TABLE probe (x INTEGER)"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(want); err != nil {
				t.Fatalf("database file: %v", err)
			}
			for pragma, wantValue := range map[string]string{
				"foreign_keys": "1", "journal_mode": "wal", "synchronous": "1", "busy_timeout": "5000",
			} {
				var got string
				if err := db.SQL.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if got != wantValue {
					t.Errorf("PRAGMA %s = %s, want %s", pragma, got, wantValue)
				}
			}
		})
	}
}

func TestOpenSqliteMemory(t *testing.T) {
	cfg := config.Defaults()
	cfg.ContentRoot = t.TempDir()
	cfg.Service.Database.ConnectionString = ":memory:"
	db, err := Open(context.Background(), &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	ok, err := db.HasTables(context.Background())
	if err != nil || !ok {
		t.Fatalf("HasTables = %v, %v", ok, err)
	}
	if entries, _ := os.ReadDir(cfg.ContentRoot); len(entries) != 0 {
		t.Fatalf("in-memory database wrote files: %v", entries)
	}
}

func TestMySQLConfig(t *testing.T) {
	tests := []struct {
		name        string
		conn        string
		net, addr   string
		db, user    string
		pass        string
		tls         string
		collation   string
		timeout     time.Duration
		ignored     []string
		wantErr     string
		wantCharset bool // charset given explicitly: no collation forced
	}{
		{
			name: "go DSN minimal", conn: "root@tcp(127.0.0.1:3306)/test",
			net: "tcp", addr: "127.0.0.1:3306", db: "test", user: "root", collation: "utf8mb4_general_ci", timeout: 10 * time.Second,
		},
		{
			name: "go DSN with parseTime=false is overridden", conn: "u:Pa55word@tcp(db:3307)/ak?parseTime=false&timeout=3s",
			net: "tcp", addr: "db:3307", db: "ak", user: "u", pass: "Pa55word", collation: "utf8mb4_general_ci", timeout: 3 * time.Second,
		},
		{
			name: "go DSN keeps an explicit collation", conn: "u:p@tcp(db)/ak?collation=utf8mb4_unicode_ci",
			net: "tcp", addr: "db:3306", db: "ak", user: "u", pass: "p", collation: "utf8mb4_unicode_ci", timeout: 10 * time.Second,
		},
		{
			name: "go DSN keeps an explicit charset", conn: "u@tcp(db)/ak?charset=utf8mb4",
			net: "tcp", addr: "db:3306", db: "ak", user: "u", collation: "", timeout: 10 * time.Second, wantCharset: true,
		},
		{
			name: "ADO.NET full", conn: "Server=db.example;Port=3307;Database=ak;User=admin;Password=s3cr;et",
			wantErr: "no '='", // an unquoted ';' in a password must be quoted
		},
		{
			name: "ADO.NET full, quoted password", conn: "Server=db.example;Port=3307;Database=ak;User=admin;Password='s3cr;et'",
			net: "tcp", addr: "db.example:3307", db: "ak", user: "admin", pass: "s3cr;et", collation: "utf8mb4_general_ci", timeout: 10 * time.Second,
		},
		{
			name: "ADO.NET aliases and case", conn: "host = 10.0.0.5 ; initial catalog=ak ; user id=app ; pwd=x=y ; SslMode=Required ; Connection Timeout=7",
			net: "tcp", addr: "10.0.0.5:3306", db: "ak", user: "app", pass: "x=y", tls: "skip-verify", collation: "utf8mb4_general_ci", timeout: 7 * time.Second,
		},
		{
			name: "ADO.NET Uid and SslMode None, ignored keys", conn: "Data Source=db;Database=ak;Uid=u;Pwd=p;SslMode=None;Allow User Variables=true;Pooling=false",
			net: "tcp", addr: "db:3306", db: "ak", user: "u", pass: "p", tls: "false", collation: "utf8mb4_general_ci", timeout: 10 * time.Second,
			ignored: []string{"allow user variables", "pooling"},
		},
		{
			name: "ADO.NET host:port and charset", conn: "Server=db:3310;Database=ak;User Id=u;CharSet=utf8mb4",
			net: "tcp", addr: "db:3310", db: "ak", user: "u", timeout: 10 * time.Second, wantCharset: true,
		},
		{
			name: "ADO.NET unix socket", conn: "Server=/run/mysqld/mysqld.sock;Protocol=Unix;Database=ak;User=u",
			net: "unix", addr: "/run/mysqld/mysqld.sock", db: "ak", user: "u", collation: "utf8mb4_general_ci", timeout: 10 * time.Second,
		},
		{name: "ADO.NET bad port", conn: "Server=db;Port=abc;Database=ak", wantErr: "Port"},
		{name: "ADO.NET bad ssl mode", conn: "Server=db;Database=ak;SslMode=Sometimes", wantErr: "SslMode"},
		{name: "ADO.NET without database", conn: "Server=db;User=u", wantErr: "names no database"},
		{name: "garbage", conn: "not a dsn", wantErr: "neither a go-sql-driver DSN"},
		{name: "empty", conn: " ", wantErr: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ignored, err := mysqlConfig(tt.conn)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want containing %q", err, tt.wantErr)
				}
				if err != nil && tt.pass != "" && strings.Contains(err.Error(), tt.pass) {
					t.Fatalf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Net != tt.net || cfg.Addr != tt.addr || cfg.DBName != tt.db || cfg.User != tt.user || cfg.Passwd != tt.pass {
				t.Errorf("got net=%q addr=%q db=%q user=%q pass=%q", cfg.Net, cfg.Addr, cfg.DBName, cfg.User, cfg.Passwd)
			}
			if !cfg.ParseTime {
				t.Error("ParseTime is off")
			}
			if !tt.wantCharset && cfg.Collation != tt.collation {
				t.Errorf("Collation = %q, want %q", cfg.Collation, tt.collation)
			}
			if tt.wantCharset && !strings.Contains(cfg.FormatDSN(), "charset=utf8mb4") {
				t.Errorf("charset lost: %s", cfg.FormatDSN())
			}
			if cfg.TLSConfig != tt.tls {
				t.Errorf("TLSConfig = %q, want %q", cfg.TLSConfig, tt.tls)
			}
			if cfg.Timeout != tt.timeout {
				t.Errorf("Timeout = %v, want %v", cfg.Timeout, tt.timeout)
			}
			if !slices.Equal(ignored, tt.ignored) {
				t.Errorf("ignored = %v, want %v", ignored, tt.ignored)
			}
			if d := describeMySQL(cfg); len(tt.pass) > 3 && strings.Contains(d, tt.pass) {
				t.Errorf("description leaks the password: %s", d)
			}
		})
	}
}

func TestPostgresDSN(t *testing.T) {
	tests := []struct {
		name             string
		conn             string
		passThrough      bool
		host             string
		port             uint16
		db, user, pass   string
		sslmode          string
		ignored          []string
		wantErr          string
		wantSearchPathIn bool
	}{
		{name: "URL", conn: "postgres://u:Pa55word@db:5433/ak?sslmode=disable", passThrough: true, host: "db", port: 5433, db: "ak", user: "u", pass: "Pa55word", sslmode: "disable"},
		{name: "postgresql URL", conn: "postgresql://u@db/ak?sslmode=disable", passThrough: true, host: "db", port: 5432, db: "ak", user: "u", sslmode: "disable"},
		{name: "pq key=value", conn: "host=db port=5434 dbname=ak user=u password='a;b' sslmode=disable", passThrough: true, host: "db", port: 5434, db: "ak", user: "u", pass: "a;b", sslmode: "disable"},
		{
			name: "Npgsql", conn: "Host=db;Port=5435;Database=ak;Username=app;Password=p'w\\d",
			host: "db", port: 5435, db: "ak", user: "app", pass: `p'w\d`, sslmode: "prefer",
		},
		{
			name: "Npgsql aliases, SSL Mode, ignored keys", conn: "Server=db; User ID=app; Database=ak; SSL Mode=Disable; Pooling=true; Search Path=ak,public; Trust Server Certificate=true",
			host: "db", port: 5432, db: "ak", user: "app", sslmode: "disable", ignored: []string{"pooling", "trust server certificate"}, wantSearchPathIn: true,
		},
		{
			name: "Npgsql lower-case with ;", conn: "host=db;database=ak;username=u;sslmode=VerifyFull",
			host: "db", port: 5432, db: "ak", user: "u", sslmode: "verify-full",
		},
		{name: "Npgsql two keys", conn: "Host=db;Username=u", host: "db", port: 5432, user: "u", sslmode: "prefer"},
		{name: "Npgsql bad ssl mode", conn: "Host=db;SslMode=Maybe", wantErr: "SslMode"},
		{name: "empty", conn: "", wantErr: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn, ignored, err := postgresDSN(tt.conn)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.passThrough && dsn != tt.conn {
				t.Errorf("dsn = %q, want the input unchanged", dsn)
			}
			cfg, err := pq.NewConfig(dsn)
			if err != nil {
				t.Fatalf("pq.NewConfig(%q): %v", dsn, err)
			}
			if cfg.Host != tt.host || cfg.Port != tt.port || cfg.Database != tt.db || cfg.User != tt.user || cfg.Password != tt.pass {
				t.Errorf("got host=%q port=%d db=%q user=%q pass=%q", cfg.Host, cfg.Port, cfg.Database, cfg.User, cfg.Password)
			}
			if string(cfg.SSLMode) != tt.sslmode {
				t.Errorf("sslmode = %q, want %q", cfg.SSLMode, tt.sslmode)
			}
			if !slices.Equal(ignored, tt.ignored) {
				t.Errorf("ignored = %v, want %v", ignored, tt.ignored)
			}
			if tt.wantSearchPathIn && cfg.Runtime["search_path"] != "ak,public" {
				t.Errorf("search_path = %q", cfg.Runtime["search_path"])
			}
			if d := describePostgres(cfg); len(tt.pass) > 3 && strings.Contains(d, tt.pass) {
				t.Errorf("description leaks the password: %s", d)
			}
		})
	}
}

func TestParseKeyValues(t *testing.T) {
	tests := []struct {
		in   string
		want []connPair
	}{
		{"A=1;B=2", []connPair{{"a", "1"}, {"b", "2"}}},
		{" ;A = 1 ;; B=  two words ;", []connPair{{"a", "1"}, {"b", "two words"}}},
		{`K='it''s;x';L="say ""hi"""`, []connPair{{"k", "it's;x"}, {"l", `say "hi"`}}},
		{"Data  Source=x", []connPair{{"data source", "x"}}},
		{"P=a=b", []connPair{{"p", "a=b"}}},
	}
	for _, tt := range tests {
		got, err := parseKeyValues(tt.in)
		if err != nil {
			t.Fatalf("parseKeyValues(%q): %v", tt.in, err)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("parseKeyValues(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
