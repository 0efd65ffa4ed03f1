package host_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// writers are, for every entity, the packages (relative to the repository)
// that create, update or delete its rows, each with the reason it may. A
// feature writes its own tables; another feature's rows change through
// that feature's API or its module.Forget (a purge's share). Anything else
// fails TestFeaturesWriteOnlyTheirOwnRows.
var writers = map[string]map[string]string{
	"SysConfig":             {"host/configcenter": "owner", "host/sysconfig": "the settings store the config center edits", "host/seed": "first-start rows"},
	"SysDictType":           {"host/dict": "owner", "host/seed": "first-start rows"},
	"SysDictItem":           {"host/dict": "owner", "host/seed": "first-start rows"},
	"SysExceptionLog":       {"host/exceptionlog": "the writer", "host/oplog": "owner: page, clearing, retention"},
	"SysFile":               {"host/file": "owner"},
	"SysFileChunk":          {"host/file": "owner"},
	"SysFileUpload":         {"host/file": "owner"},
	"SysJob":                {"host/job": "owner"},
	"SysJobLog":             {"host/job": "owner"},
	"SysLoginLog":           {"host/auth": "owner"},
	"SysMenu":               {"host/menu": "owner", "host/seed": "first-start rows and every module's menus", "host/kerneltest": "test kit"},
	"SysModule":             {"host/menu": "owner", "host/seed": "first-start rows"},
	"SysMfaHighSensitivity": {"host/mfa/reauth": "owner"},
	"SysNotice":             {"host/notice": "owner"},
	"SysNoticeRead":         {"host/notice": "owner"},
	"SysNoticeReceiver":     {"host/notice": "owner"},
	"SysNoticeWatermark":    {"host/notice": "owner"},
	"SysOpLog":              {"host/oplog": "owner (its writer serves the job engine and the CLI too)"},
	"SysOrg":                {"host/org": "owner", "host/seed": "first-start rows"},
	"SysPosition":           {"host/org": "owner", "host/seed": "first-start rows"},
	"SysRole":               {"host/role": "owner", "host/seed": "first-start rows", "host/kerneltest": "test kit"},
	"SysRoleDataScope":      {"host/role": "owner", "host/seed": "first-start rows"},
	"SysRoleMenu":           {"host/role": "owner (a purged menu's grants: role's forget)", "host/kerneltest": "test kit"},
	"SysSession":            {"host/session": "owner"},
	"SysSessionToken":       {"host/session": "owner"},
	"SysUser": {
		"host/user":         "owner",
		"host/auth":         "the account's own password, profile and sign-in stamps",
		"host/mfa":          "the account's second factors",
		"host/mfa/reauth":   "the account's re-authentication stamp",
		"host/externalauth": "just-in-time provisioning of an external login's account",
		"host/menu":         "the account's default module (the portal's choice)",
		"host/seed":         "the first super-admin",
		"host/kerneltest":   "test kit",
	},
	"SysUserExternal":     {"host/externalauth": "owner"},
	"SysUserPasskey":      {"host/mfa/passkey": "owner", "host/mfa": "the factor area: a reset, a purged user's passkeys"},
	"SysUserRecoveryCode": {"host/mfa": "owner"},
	"SysUserRole": {
		"host/user":         "owner: an account's roles",
		"host/role":         "owner: a role's holders (the link table belongs to both ends)",
		"host/externalauth": "the default role of a just-in-time account",
		"host/kerneltest":   "test kit",
	},
}

var entWrites = map[string]bool{"Create": true, "CreateBulk": true, "MapCreateBulk": true, "Update": true,
	"UpdateOne": true, "UpdateOneID": true, "Delete": true, "DeleteOne": true, "DeleteOneID": true}

// entWriters walks the non-test Go files under root and returns, per
// entity, the packages (dirs relative to base) calling a write of
// <client or tx>.<Entity>.
func entWriters(t *testing.T, base string, roots ...string) map[string]map[string]int {
	t.Helper()
	found := map[string]map[string]int{}
	fset := token.NewFileSet()
	for _, root := range roots {
		err := filepath.WalkDir(filepath.Join(base, root), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			dir, _ := filepath.Rel(base, filepath.Dir(p))
			ast.Inspect(f, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := c.Fun.(*ast.SelectorExpr)
				if !ok || !entWrites[sel.Sel.Name] {
					return true
				}
				if x, ok := sel.X.(*ast.SelectorExpr); ok && strings.HasPrefix(x.Sel.Name, "Sys") {
					if found[x.Sel.Name] == nil {
						found[x.Sel.Name] = map[string]int{}
					}
					found[x.Sel.Name][filepath.ToSlash(dir)]++
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// TestFeaturesWriteOnlyTheirOwnRows: every ent write of a kernel table
// (Create, Update, Delete... on client.SysX or tx.SysX) in the host and the
// examples comes from a package the writers table allows, and every entry
// of the table is still used (a stale permission is removed, not kept).
func TestFeaturesWriteOnlyTheirOwnRows(t *testing.T) {
	found := entWriters(t, "..", "host", "examples")
	var bad []string
	calls := 0
	for entity, pkgs := range found {
		for pkg, n := range pkgs {
			calls += n
			if _, ok := writers[entity][pkg]; !ok {
				bad = append(bad, pkg+" writes "+entity)
			}
		}
	}
	for entity, pkgs := range writers {
		for pkg := range pkgs {
			if found[entity][pkg] == 0 {
				bad = append(bad, "stale entry: "+pkg+" no longer writes "+entity)
			}
		}
	}
	sort.Strings(bad)
	if calls < 100 {
		t.Fatalf("found %d ent writes: the scan ran on too little", calls)
	}
	if len(bad) > 0 {
		t.Fatalf("table writes outside their owners (a feature changes another's rows through its API or a module.Forget):\n  %s", strings.Join(bad, "\n  "))
	}
	t.Logf("%d ent write calls of %d entities, each from an allowed package", calls, len(found))
}
