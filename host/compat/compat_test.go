package compat_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/adminkernel/kernel/host/idp/oidc/oidctest"
	"github.com/adminkernel/kernel/host/kerneltest"
)

// contractReauth is the contract's list of +R operations (§4.11,
// "Endpoints marked +R": 30 of them); a fixture of one of them says
// reauth, and no other fixture does.
var contractReauth = map[string]bool{}

func init() {
	for _, op := range []string{
		"POST /api/v1/sys/user", "PUT /api/v1/sys/user/{id}", "DELETE /api/v1/sys/user/{id}", "POST /api/v1/sys/user/batch-delete",
		"PUT /api/v1/sys/user/{id}/password", "PUT /api/v1/sys/user/{id}/enabled",
		"POST /api/v1/sys/role/add", "PUT /api/v1/sys/role/{id}", "DELETE /api/v1/sys/role/{id}", "POST /api/v1/sys/role/batch-delete",
		"PUT /api/v1/sys/role/users", "PUT /api/v1/sys/role/menu", "PUT /api/v1/sys/role/datascope",
		"POST /api/v1/sys/menu/add", "PUT /api/v1/sys/menu/{id}", "DELETE /api/v1/sys/menu/{id}",
		"PUT /api/v1/sys/config/batch", "POST /api/v1/sys/config", "PUT /api/v1/sys/config/{id}", "DELETE /api/v1/sys/config/{id}",
		"DELETE /api/v1/sys/session/{sessionId}",
		"POST /api/v1/sys/job", "PUT /api/v1/sys/job/{id}", "DELETE /api/v1/sys/job/{id}", "POST /api/v1/sys/job/batch-delete", "POST /api/v1/sys/job/{id}/run",
		"DELETE /api/v1/sys/recycle/{type}/{id}",
		"POST /api/v1/sys/mfa/clear", "POST /api/v1/sys/mfa/high-sensitivity", "DELETE /api/v1/sys/mfa/high-sensitivity/{id}",
	} {
		contractReauth[op] = true
	}
}

// runPending (ADMINKERNEL_COMPAT_RUN_PENDING=1) also runs the fixtures
// marked pending and logs how they fare; they are still counted as skipped.
var runPending = os.Getenv("ADMINKERNEL_COMPAT_RUN_PENDING") == "1"

// TestOriginalUIFixtures runs every fixture of fixtures/*.json, in file and
// then list order, against one kernel through its real HTTP stack, and
// prints the summary line. It fails on any failed fixture, when no fixture
// ran, and when there are fewer operation fixtures than operations in
// ui-operations.txt (an emptied file cannot pass).
func TestOriginalUIFixtures(t *testing.T) {
	files := loadFixtures(t)
	uiOps := loadUIOperations(t)

	// The built-in OIDC provider under the code "oidc" (the contract's
	// neutral code), against a test OpenID provider, so that the external
	// login operations run a real authorize, callback, exchange and bind.
	is := oidctest.New(t)
	for _, u := range []oidctest.User{
		{Subject: "sub-newcomer", PreferredUsername: "newcomer", Name: "Newcomer"},
		{Subject: "sub-fx-user", PreferredUsername: "fx_user", Name: "Fixture User"},
	} {
		is.AddUser(u)
	}
	k := kerneltest.Start(t, []string{
		"Service__ExternalAuth__Oidc__0__Code=oidc",
		"Service__ExternalAuth__Oidc__0__DisplayName=SSO",
		"Service__ExternalAuth__Oidc__0__Authority=" + is.URL,
		"Service__ExternalAuth__Oidc__0__ClientId=" + is.ClientID,
		"Service__ExternalAuth__Oidc__0__ClientSecret=" + is.ClientSecret,
		// The Http job fixture's host (an operator lists the hosts Http jobs
		// may call; none by default).
		"Service__Job__HttpAllowedHosts__0=example.com",
	})
	k.Leaks.Secrets = append(k.Leaks.Secrets, is.ClientSecret)
	r := &runner{t: t, k: k, is: is, vars: map[string]any{"adminPassword": kerneltest.AdminPassword}, cookies: map[string]string{}}

	var results []result
	for _, ff := range files {
		for _, f := range ff.Fixtures {
			res := result{f: f, file: ff.name}
			if f.Pending != "" {
				res.skipped = f.Pending
				if runPending {
					// Run anyway to see where the kernel stands; the
					// outcome is logged, the fixture stays skipped.
					res.problems = r.run(f)
				}
			} else {
				on, err := k.Settings().Bool(t.Context(), "sys.security.totp.enabled")
				if err != nil {
					t.Fatal(err)
				}
				res.totpOn = on
				res.problems = r.run(f)
			}
			results = append(results, res)
		}
	}

	var ops, passed, failed, deviations, pending, open, steps, stepsFailed, reauth int
	for _, res := range results {
		if res.f.Op == "" {
			steps++
			if len(res.problems) > 0 {
				stepsFailed++
				t.Errorf("FAIL %s:\n\t%s", res.label(), strings.Join(res.problems, "\n\t"))
			}
			continue
		}
		ops++
		switch {
		case res.skipped != "":
			pending++
			switch {
			case !runPending:
				t.Logf("SKIP %s: pending %q", res.label(), res.skipped)
			case len(res.problems) == 0:
				t.Logf("SKIP %s: pending %q (ran: passes)", res.label(), res.skipped)
			default:
				t.Logf("SKIP %s: pending %q (ran: fails)\n\t%s", res.label(), res.skipped, strings.Join(res.problems, "\n\t"))
			}
		case res.f.Open != "" && len(res.problems) > 0:
			open++
			t.Logf("OPEN %s: %s\n\t%s", res.label(), res.f.Open, strings.Join(res.problems, "\n\t"))
		case res.f.Open != "":
			failed++
			t.Errorf("FAIL %s: marked open (%s) but passes: remove the mark", res.label(), res.f.Open)
		case len(res.problems) > 0:
			failed++
			t.Errorf("FAIL %s:\n\t%s", res.label(), strings.Join(res.problems, "\n\t"))
		default:
			passed++
			if res.f.Reauth && res.totpOn && (res.f.Expect.Code == nil || *res.f.Expect.Code != 40024) {
				reauth++
			}
			if res.f.Deviation != nil {
				deviations++
				t.Logf("DEVIATION %s: %s (%s)", res.label(), res.f.Deviation.Row, res.f.Deviation.Anchor)
			}
		}
	}
	summary := fmt.Sprintf("%d operations, %d passed, %d failed, %d documented deviations; %d skipped as pending, %d open mismatches; %d setup steps (%d failed); %d +R operations passed with TOTP on inside a re-authentication window; %d UI operations listed",
		ops, passed, failed, deviations, pending, open, steps, stepsFailed, reauth, len(uiOps))
	fmt.Println("compat: " + summary)
	t.Log(summary)

	if ops == 0 || passed == 0 {
		t.Fatal("no fixture ran")
	}
	if ops < len(uiOps) {
		t.Fatalf("%d operation fixtures for %d UI operations: fixtures are missing", ops, len(uiOps))
	}
}

// TestOriginalUIFixturesCoverUI checks, without a kernel, that every
// operation of ui-operations.txt has a fixture, that every fixture names an
// operation of the list (or is a setup step), and that pending and
// deviation marks are complete.
func TestOriginalUIFixturesCoverUI(t *testing.T) {
	files := loadFixtures(t)
	uiOps := loadUIOperations(t)
	listed := map[string]bool{}
	for _, op := range uiOps {
		listed[op] = true
	}
	sections := compatSections(t)
	covered := map[string]int{}
	n := 0
	for _, ff := range files {
		if ff.Area == "" || ff.About == "" {
			t.Errorf("%s: area and about are required", ff.name)
		}
		for i, f := range ff.Fixtures {
			at := fmt.Sprintf("%s #%d %s%s", ff.name, i+1, f.Op, f.Step)
			if (f.Op == "") == (f.Step == "") {
				t.Errorf("%s: a fixture has exactly one of op and step", at)
				continue
			}
			if d := f.Deviation; d != nil && (!strings.HasPrefix(d.Anchor, "docs/reference/compatibility.md#") || d.Row == "") {
				t.Errorf("%s: a deviation names its docs/reference/compatibility.md anchor and row", at)
			}
			if d := f.Deviation; d != nil {
				anchor := strings.TrimPrefix(d.Anchor, "docs/reference/compatibility.md#")
				body, ok := sections[anchor]
				if !ok {
					t.Errorf("%s: docs/reference/compatibility.md has no heading #%s", at, anchor)
				} else if !hasRow(body, d.Row) {
					t.Errorf("%s: docs/reference/compatibility.md#%s has no table row %q", at, anchor, d.Row)
				}
			}
			if f.Deviation != nil && f.Open != "" {
				t.Errorf("%s: a fixture is a documented deviation or an open mismatch, not both", at)
			}
			if f.Op == "" {
				continue
			}
			n++
			if !listed[f.Op] {
				t.Errorf("%s: %q is not in ui-operations.txt", at, f.Op)
			}
			covered[f.Op]++
		}
	}
	for _, ff := range files {
		for i, f := range ff.Fixtures {
			if f.Op != "" && f.Reauth != contractReauth[f.Op] {
				t.Errorf("%s #%d %s: reauth %v, but the contract's +R list says %v", ff.name, i+1, f.Op, f.Reauth, contractReauth[f.Op])
			}
		}
	}
	for op := range contractReauth {
		if !listed[op] {
			t.Errorf("+R operation %s is not in ui-operations.txt", op)
		}
	}
	for _, op := range uiOps {
		if covered[op] == 0 {
			t.Errorf("UI operation %s has no fixture", op)
		}
	}
	if n < len(uiOps) {
		t.Errorf("%d operation fixtures for %d UI operations", n, len(uiOps))
	}
	t.Logf("%d UI operations, %d operation fixtures, every operation covered: %v", len(uiOps), n, !t.Failed())
}

var slugDrop = regexp.MustCompile(`[^a-z0-9 _-]`)

// compatSections reads docs/reference/compatibility.md into its sections by heading
// anchor (GitHub's slug: lower case, punctuation dropped, spaces to "-").
func compatSections(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	cur := ""
	for _, line := range strings.Split(string(raw), "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.TrimSpace(strings.TrimLeft(h, "#"))
			cur = strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
			continue
		}
		out[cur] += line + "\n"
	}
	return out
}

// hasRow reports whether a section has a table row whose first cell is
// row (backticks ignored).
func hasRow(section, row string) bool {
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) > 2 && strings.TrimSpace(cells[0]) == "" && strings.ReplaceAll(strings.TrimSpace(cells[1]), "`", "") == row {
			return true
		}
	}
	return false
}
