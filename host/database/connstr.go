package database

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
)

// connPair is one key=value part of an ADO.NET style connection string.
type connPair struct {
	key   string // normalised: lower case, inner blanks collapsed to one space
	value string
}

// parseKeyValues splits an ADO.NET style connection string
// (`Key=Value;Other Key='quoted; value'`) into pairs. Keys are matched
// case-insensitively and may contain spaces; values may be quoted with ' or "
// (a doubled quote inside stands for one). Empty parts are skipped.
func parseKeyValues(s string) ([]connPair, error) {
	var pairs []connPair
	i := 0
	for i < len(s) {
		// Key: up to '='.
		for i < len(s) && (s[i] == ';' || s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		eq := strings.IndexByte(s[i:], '=')
		semi := strings.IndexByte(s[i:], ';')
		if eq < 0 || (semi >= 0 && semi < eq) {
			return nil, fmt.Errorf("connection string part %d has no '='", len(pairs)+1)
		}
		key := normaliseKey(s[i : i+eq])
		i += eq + 1
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		var value string
		if i < len(s) && (s[i] == '\'' || s[i] == '"') {
			q := s[i]
			var b strings.Builder
			i++
			closed := false
			for i < len(s) {
				if s[i] == q {
					if i+1 < len(s) && s[i+1] == q {
						b.WriteByte(q)
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				b.WriteByte(s[i])
				i++
			}
			if !closed {
				return nil, fmt.Errorf("connection string value of %q has an unterminated quote", key)
			}
			value = b.String()
			for i < len(s) && s[i] != ';' {
				if s[i] != ' ' && s[i] != '\t' {
					return nil, fmt.Errorf("connection string value of %q has text after the closing quote", key)
				}
				i++
			}
		} else {
			end := strings.IndexByte(s[i:], ';')
			if end < 0 {
				end = len(s) - i
			}
			value = strings.TrimSpace(s[i : i+end])
			i += end
		}
		if key == "" {
			return nil, fmt.Errorf("connection string part %d has an empty key", len(pairs)+1)
		}
		pairs = append(pairs, connPair{key: key, value: value})
	}
	return pairs, nil
}

func normaliseKey(k string) string {
	return strings.ToLower(strings.Join(strings.Fields(k), " "))
}

// firstKey returns the normalised text before the first '=' of s, or "" when
// s has no '='.
func firstKey(s string) string {
	eq := strings.IndexByte(s, '=')
	if eq < 0 {
		return ""
	}
	return normaliseKey(s[:eq])
}

// ---------------------------------------------------------------- SQLite

var sqliteSourceKeys = []string{"data source", "datasource", "filename"}

// sqliteOtherKeys are Microsoft.Data.Sqlite / System.Data.SQLite keywords
// that are accepted and ignored.
var sqliteOtherKeys = []string{
	"mode", "cache", "password", "foreign keys", "recursive triggers", "default timeout",
	"pooling", "vfs", "version", "new", "journal mode", "synchronous", "busytimeout",
}

// memoryPath is the SQLite in-memory database name.
const memoryPath = ":memory:"

// sqliteSource extracts the database path from a Sqlite connection string:
// `Data Source=<path>` (key case-insensitive, blanks allowed, other
// `;key=value` parts ignored; `DataSource` and `Filename` are accepted too)
// or a plain path.
func sqliteSource(conn string) (string, error) {
	conn = strings.TrimSpace(conn)
	if conn == "" {
		return "", errors.New("the Sqlite connection string is empty")
	}
	if !strings.Contains(conn, "=") {
		return conn, nil
	}
	if k := firstKey(conn); !slices.Contains(sqliteSourceKeys, k) && !slices.Contains(sqliteOtherKeys, k) && !strings.Contains(conn, ";") {
		// A path that happens to contain '=' (no key of ours, no parts).
		return conn, nil
	}
	pairs, err := parseKeyValues(conn)
	if err != nil {
		return "", fmt.Errorf("the Sqlite connection string: %w", err)
	}
	for _, p := range pairs {
		if slices.Contains(sqliteSourceKeys, p.key) {
			if strings.TrimSpace(p.value) == "" {
				return "", errors.New("the Sqlite connection string has an empty Data Source")
			}
			return strings.TrimSpace(p.value), nil
		}
	}
	return "", errors.New(`the Sqlite connection string has no "Data Source=<path>" part`)
}

// resolveSqlitePath makes path absolute against contentRoot (or the working
// directory when contentRoot is empty). The in-memory name is kept.
func resolveSqlitePath(path, contentRoot string) (string, error) {
	if isMemory(path) {
		return memoryPath, nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(contentRoot, path)
	}
	return filepath.Abs(path)
}

func isMemory(path string) bool {
	return path == memoryPath || strings.EqualFold(path, "memory") || strings.EqualFold(path, memoryPath)
}

// sqlitePragmas are the connection settings of every SQLite connection
// (design.md: foreign keys on, WAL, synchronous NORMAL, 5 s busy timeout,
// BEGIN IMMEDIATE so that read-then-write transactions do not fail with
// SQLITE_BUSY). In addition, times are written in UTC in SQLite's own format
// (`2006-01-02 15:04:05.999999999+00:00`): the driver's default is Go's
// time.String() in the value's zone, so a comparison such as
// `expires_at > ?` would compare text across zones; in one zone and format
// text order is time order, and SQLite's date functions can read the values.
// Times read back are in UTC, as with MySQL.
const sqlitePragmas = "_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_txlock=immediate&_time_format=sqlite&_timezone=UTC"

// SqliteDSN returns the modernc.org/sqlite DSN the kernel opens for an
// absolute path (or ":memory:"): tools that write the kernel's SQLite file
// (bench/cmd/scale) open it the same way, times in the same format.
func SqliteDSN(path string) string {
	if isMemory(path) {
		return "file::memory:?" + sqlitePragmas
	}
	return "file:" + sqliteURIPath(path) + "?" + sqlitePragmas
}

// sqliteURIPath escapes path for a SQLite URI filename.
func sqliteURIPath(path string) string {
	p := filepath.ToSlash(path)
	if runtime.GOOS == "windows" && filepath.VolumeName(path) != "" {
		p = "/" + p
	}
	r := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")
	return r.Replace(p)
}

// ---------------------------------------------------------------- MySQL

// ADO.NET (MySqlConnector / Connector/NET) keys understood by mysqlConfig.
var (
	adoHostKeys     = []string{"server", "host", "data source", "datasource", "address", "addr", "network address"}
	adoPortKeys     = []string{"port"}
	adoDatabaseKeys = []string{"database", "initial catalog", "db"}
	adoUserKeys     = []string{"user id", "userid", "user", "username", "user name", "uid"}
	adoPasswordKeys = []string{"password", "pwd"}
	adoSSLKeys      = []string{"ssl mode", "sslmode", "ssl-mode"}
	adoTimeoutKeys  = []string{"connection timeout", "connect timeout", "connectiontimeout", "connecttimeout", "timeout"}
)

var mysqlADOKeys = slices.Concat(adoHostKeys, adoPortKeys, adoDatabaseKeys, adoUserKeys, adoPasswordKeys)

// mysqlConfig parses a MySQL connection string: the go-sql-driver DSN
// (`user:pass@tcp(host:3306)/db?param=value`) or the ADO.NET form
// (`Server=..;Port=..;Database=..;User=..;Password=..`). parseTime is always
// on; when neither charset nor collation is given the connection uses
// utf8mb4 (collation utf8mb4_general_ci). ignored lists the ADO.NET keys that
// have no equivalent.
func mysqlConfig(conn string) (cfg *mysql.Config, ignored []string, err error) {
	conn = strings.TrimSpace(conn)
	if conn == "" {
		return nil, nil, errors.New("the MySql connection string is empty")
	}
	explicitCharset := false
	if slices.Contains(mysqlADOKeys, firstKey(conn)) {
		cfg, ignored, explicitCharset, err = mysqlFromADO(conn)
		if err != nil {
			return nil, nil, err
		}
	} else {
		cfg, err = mysql.ParseDSN(conn)
		if err != nil {
			return nil, nil, fmt.Errorf("the MySql connection string is neither a go-sql-driver DSN (user:pass@tcp(host:3306)/db) nor an ADO.NET string (Server=..;Database=..): %w", err)
		}
		if q := strings.LastIndexByte(conn, '?'); q >= 0 {
			if vals, err := url.ParseQuery(conn[q+1:]); err == nil {
				explicitCharset = vals.Has("charset") || vals.Has("collation")
			}
		}
	}
	cfg.ParseTime = true
	if !explicitCharset && cfg.Collation == "" {
		cfg.Collation = "utf8mb4_general_ci"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.DBName == "" {
		return nil, nil, errors.New("the MySql connection string names no database")
	}
	return cfg, ignored, nil
}

func mysqlFromADO(conn string) (cfg *mysql.Config, ignored []string, explicitCharset bool, err error) {
	pairs, err := parseKeyValues(conn)
	if err != nil {
		return nil, nil, false, fmt.Errorf("the MySql connection string: %w", err)
	}
	cfg = mysql.NewConfig()
	cfg.Net = "tcp"
	host, port := "", ""
	for _, p := range pairs {
		switch {
		case slices.Contains(adoHostKeys, p.key):
			host = p.value
		case slices.Contains(adoPortKeys, p.key):
			port = p.value
		case slices.Contains(adoDatabaseKeys, p.key):
			cfg.DBName = p.value
		case slices.Contains(adoUserKeys, p.key):
			cfg.User = p.value
		case slices.Contains(adoPasswordKeys, p.key):
			cfg.Passwd = p.value
		case slices.Contains(adoSSLKeys, p.key):
			switch strings.ToLower(strings.ReplaceAll(p.value, " ", "")) {
			case "none", "disabled", "disable", "false":
				cfg.TLSConfig = "false"
			case "preferred", "prefer":
				cfg.TLSConfig = "preferred"
			case "required", "require", "true":
				cfg.TLSConfig = "skip-verify"
			case "verifyca", "verify_ca", "verify-ca", "verifyfull", "verify_identity", "verify-full", "verifyidentity":
				cfg.TLSConfig = "true"
			default:
				return nil, nil, false, fmt.Errorf("the MySql connection string has an unknown SslMode %q (None, Preferred, Required, VerifyCA, VerifyFull)", p.value)
			}
		case slices.Contains(adoTimeoutKeys, p.key):
			secs, err := strconv.Atoi(p.value)
			if err != nil || secs < 0 {
				return nil, nil, false, fmt.Errorf("the MySql connection string has an invalid %s %q", p.key, p.value)
			}
			cfg.Timeout = time.Duration(secs) * time.Second
		case p.key == "charset" || p.key == "character set":
			if err := cfg.Apply(mysql.Charset(p.value, "")); err != nil {
				return nil, nil, false, err
			}
			explicitCharset = true
		case p.key == "protocol" || p.key == "connection protocol" || p.key == "transport":
			switch strings.ToLower(p.value) {
			case "unix", "unixsocket", "unix socket":
				cfg.Net = "unix"
			case "tcp", "socket", "tcpip", "tcp/ip":
				cfg.Net = "tcp"
			default:
				return nil, nil, false, fmt.Errorf("the MySql connection string has an unsupported Protocol %q (Tcp, Unix)", p.value)
			}
		default:
			ignored = append(ignored, p.key)
		}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if cfg.Net == "unix" {
		cfg.Addr = host
	} else {
		if port == "" {
			if h, p, err := net.SplitHostPort(host); err == nil {
				host, port = h, p
			} else {
				port = "3306"
			}
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return nil, nil, false, fmt.Errorf("the MySql connection string has an invalid Port %q", port)
		}
		cfg.Addr = net.JoinHostPort(host, port)
	}
	return cfg, ignored, explicitCharset, nil
}

// describeMySQL is a password-free description for logs and errors.
func describeMySQL(cfg *mysql.Config) string {
	return fmt.Sprintf("%s(%s)/%s user=%s", cfg.Net, cfg.Addr, cfg.DBName, cfg.User)
}

// ---------------------------------------------------------------- PostgreSQL

// Npgsql keys understood by postgresDSN, with their lib/pq names.
var npgsqlKeys = map[string]string{
	"host": "host", "server": "host",
	"port":     "port",
	"database": "dbname", "db": "dbname", "initial catalog": "dbname",
	"username": "user", "user name": "user", "user id": "user", "userid": "user", "user": "user", "uid": "user",
	"password": "password", "pwd": "password",
	"ssl mode": "sslmode", "sslmode": "sslmode",
	"timeout": "connect_timeout", "connect timeout": "connect_timeout", "connection timeout": "connect_timeout",
	"search path": "search_path", "searchpath": "search_path",
	"application name": "application_name", "applicationname": "application_name",
}

// pqKeys are lib/pq's own key=value keywords (lower case, as pq expects).
var pqKeys = []string{
	"host", "hostaddr", "port", "dbname", "user", "password", "passfile", "options",
	"application_name", "fallback_application_name", "sslmode", "sslcert", "sslkey",
	"sslrootcert", "sslsni", "sslinline", "sslnegotiation", "connect_timeout",
	"service", "target_session_attrs", "load_balance_hosts", "min_protocol_version",
	"max_protocol_version", "krbsrvname", "krbspn", "disable_prepared_binary_result",
	"binary_parameters", "search_path",
}

// postgresDSN returns a lib/pq connection string: URLs
// (postgres://user:pass@host:5432/db?sslmode=disable) and pq's key=value
// form pass through; the ADO.NET / Npgsql form
// (Host=..;Port=..;Database=..;Username=..;Password=..) is converted. An
// Npgsql string without SslMode gets sslmode=prefer (Npgsql's default).
// ignored lists Npgsql keys that have no lib/pq equivalent.
func postgresDSN(conn string) (dsn string, ignored []string, err error) {
	conn = strings.TrimSpace(conn)
	if conn == "" {
		return "", nil, errors.New("the PostgreSQL connection string is empty")
	}
	lower := strings.ToLower(conn)
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		return conn, nil, nil
	}
	rawKey := ""
	if eq := strings.IndexByte(conn, '='); eq >= 0 {
		rawKey = strings.TrimSpace(conn[:eq])
	}
	_, npgsqlKey := npgsqlKeys[normaliseKey(rawKey)]
	if !npgsqlKey || (slices.Contains(pqKeys, rawKey) && !containsUnquoted(conn, ';')) {
		return conn, nil, nil // lib/pq key=value form (or let pq report the error)
	}
	pairs, err := parseKeyValues(conn)
	if err != nil {
		return "", nil, fmt.Errorf("the PostgreSQL connection string: %w", err)
	}
	var b strings.Builder
	hasSSL := false
	for _, p := range pairs {
		name, ok := npgsqlKeys[p.key]
		if !ok {
			ignored = append(ignored, p.key)
			continue
		}
		value := p.value
		if name == "sslmode" {
			hasSSL = true
			switch strings.ToLower(strings.ReplaceAll(value, " ", "")) {
			case "disable", "disabled", "none":
				value = "disable"
			case "allow":
				value = "allow"
			case "prefer", "preferred":
				value = "prefer"
			case "require", "required":
				value = "require"
			case "verifyca", "verify-ca":
				value = "verify-ca"
			case "verifyfull", "verify-full":
				value = "verify-full"
			default:
				return "", nil, fmt.Errorf("the PostgreSQL connection string has an unknown SslMode %q (Disable, Allow, Prefer, Require, VerifyCA, VerifyFull)", p.value)
			}
		}
		writePQ(&b, name, value)
	}
	if !hasSSL {
		writePQ(&b, "sslmode", "prefer")
	}
	return b.String(), ignored, nil
}

// containsUnquoted reports whether c occurs in s outside lib/pq single
// quotes (which use backslash escapes).
func containsUnquoted(s string, c byte) bool {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '\'':
			quoted = !quoted
		case !quoted && s[i] == c:
			return true
		}
	}
	return false
}

func writePQ(b *strings.Builder, key, value string) {
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(key)
	b.WriteString("='")
	b.WriteString(strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(value))
	b.WriteByte('\'')
}

// describePostgres is a password-free description for logs and errors.
func describePostgres(cfg pq.Config) string {
	return fmt.Sprintf("host=%s port=%d dbname=%s user=%s", cfg.Host, cfg.Port, cfg.Database, cfg.User)
}
