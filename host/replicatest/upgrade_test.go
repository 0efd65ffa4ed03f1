//go:build upgradetest && !unit

package replicatest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// repoRoot is the top of the repository of this test (git commands run
// there: `git archive` in a subdirectory archives only that).
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").CombinedOutput()
	if err != nil {
		t.Fatalf("the rolling-upgrade test needs the git checkout of the kernel: git rev-parse: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// git runs git at the top of the repository and returns its trimmed
// output.
func git(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", repoRoot(t)}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// previousRelease is the release the rolling upgrade starts from:
// $ADMINKERNEL_PREVIOUS_RELEASE (any git revision), else the newest v* tag
// that HEAD contains and that does not point at HEAD itself, else the newest
// entry of the repository's RELEASES file (tag and commit, kept because a
// mirror or a hand-over may carry main's commits without its tags) whose
// commit HEAD contains.
func previousRelease(t *testing.T) string {
	t.Helper()
	if ref := os.Getenv("ADMINKERNEL_PREVIOUS_RELEASE"); ref != "" {
		return ref
	}
	if git(t, "rev-parse", "--is-shallow-repository") == "true" {
		t.Fatal("the rolling-upgrade test builds the previous release from git history, and this clone is shallow: " +
			"clone without --depth (or run `git fetch --unshallow --tags`), or set ADMINKERNEL_PREVIOUS_RELEASE to a revision present here")
	}
	head := git(t, "rev-parse", "HEAD")
	for _, tag := range strings.Fields(git(t, "tag", "--merged", "HEAD", "--sort=-v:refname", "v*")) {
		if git(t, "rev-parse", tag+"^{commit}") != head {
			return tag
		}
	}
	if commit, tag := recordedRelease(t, head); commit != "" {
		t.Logf("no v* tag in this clone: %s taken from RELEASES (%s)", tag, commit)
		return commit
	}
	t.Fatal("no release before HEAD: neither a v* tag (`git fetch --tags`) nor a RELEASES entry whose commit HEAD contains; " +
		"set ADMINKERNEL_PREVIOUS_RELEASE to a revision present here")
	return ""
}

// recordedRelease is the newest entry of RELEASES ("<tag> <commit> <date>"
// lines, newest last) whose commit is an ancestor of head and not head.
func recordedRelease(t *testing.T, head string) (commit, tag string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "RELEASES"))
	if err != nil {
		return "", ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") || f[1] == head {
			continue
		}
		if exec.Command("git", "-C", repoRoot(t), "merge-base", "--is-ancestor", f[1], head).Run() == nil {
			commit, tag = f[1], f[0]
		}
	}
	return commit, tag
}

// buildRelease builds host/cmd/adminkernel of the git revision ref, from
// `git archive` of it, into the test's binary directory.
func buildRelease(t *testing.T, ref string) string {
	t.Helper()
	src := t.TempDir()
	archive := exec.Command("git", "-C", repoRoot(t), "archive", "--format=tar", ref)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	var errs bytes.Buffer
	archive.Stderr, untar.Stderr = &errs, &errs
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", ref, err, errs.String())
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("tar: %v\n%s", err, errs.String())
	}
	bin := filepath.Join(binDir, "adminkernel-"+regexp.MustCompile(`[^A-Za-z0-9._-]`).ReplaceAllString(ref, "_"))
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-X main.version="+ref, "-o", bin, "./host/cmd/adminkernel")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the previous release %s: %v\n%s", ref, err, out)
	}
	return bin
}

// migrationCount is the number of migration files of a source tree's
// PostgreSQL directory at git revision ref ("" = the working tree).
func migrationCount(t *testing.T, ref string) int {
	t.Helper()
	const dir = "host/database/migrations/postgres/"
	var names []string
	if ref == "" {
		entries, err := os.ReadDir(filepath.Join(repoRoot(t), dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			names = append(names, e.Name())
		}
	} else {
		names = strings.Fields(git(t, "ls-tree", "--name-only", ref+":"+dir))
	}
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, ".sql") {
			n++
		}
	}
	return n
}

// upgradeLoad is a round of traffic across the replicas: each client logs
// in on one replica, pings and refreshes on another, pings with the new
// pair on a third; every request must succeed.
func upgradeLoad(t *testing.T, c *browser, phase string, bases []string) {
	t.Helper()
	const clients, rounds = 4, 5
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []string
		ok     int
	)
	for w := range clients {
		wg.Go(func() {
			for r := range rounds {
				login := bases[(w+r)%len(bases)]
				other := bases[(w+r+1)%len(bases)]
				fail := func(what string, rep reply, err error) bool {
					if err == nil && rep.Status == 200 && rep.Code == 0 {
						return false
					}
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%s: %s = HTTP %d code %d %v %.200s", phase, what, rep.Status, rep.Code, err, rep.Raw))
					mu.Unlock()
					return true
				}
				rep, err := c.try("POST", login+"/api/v1/auth/login", "", map[string]string{"account": "superAdmin", "password": adminPassword})
				if fail("login on "+login, rep, err) {
					continue
				}
				var tk tokens
				if err := json.Unmarshal(rep.Data, &tk); err != nil {
					fail("login answer", rep, err)
					continue
				}
				rep, err = c.try("GET", other+"/api/v1/ping", tk.AccessToken, nil)
				if fail("ping on "+other+" with a token of "+login, rep, err) {
					continue
				}
				rep, err = c.try("POST", other+"/api/v1/auth/refresh", "", map[string]string{"refreshToken": tk.RefreshToken})
				if fail("refresh on "+other+" of a session of "+login, rep, err) {
					continue
				}
				var next tokens
				if err := json.Unmarshal(rep.Data, &next); err != nil {
					fail("refresh answer", rep, err)
					continue
				}
				rep, err = c.try("GET", login+"/api/v1/ping", next.AccessToken, nil)
				if fail("ping on "+login+" with the pair refreshed on "+other, rep, err) {
					continue
				}
				// The rotated-away refresh token is refused by the other
				// version too (strict rotation: RefreshGraceSeconds 0).
				rep, err = c.try("POST", login+"/api/v1/auth/refresh", "", map[string]string{"refreshToken": tk.RefreshToken})
				if err == nil && rep.Code == 0 {
					err = errors.New("not refused")
				}
				if err != nil {
					fail("reuse of a rotated refresh token on "+login+" (want a refusal)", rep, err)
					continue
				}
				mu.Lock()
				ok++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d of %d rounds failed:\n%s", len(failed), clients*rounds, strings.Join(failed, "\n"))
	}
	t.Logf("%s: %d rounds of login, ping, refresh, ping, reuse across %v: all as expected", phase, ok, bases)
}

// TestRollingUpgrade: the previous release's binary and this one serve
// side by side on one PostgreSQL database after this one's migrations were
// applied (issue 30 item 4, docs/operators/upgrade.md "Rolling upgrades"):
//
//  1. the previous release starts on an empty database (it migrates and
//     seeds it) and serves;
//  2. this binary's `migrate` applies the newer files while the old
//     replica keeps serving;
//  3. this binary starts next to it; logins, refreshes and pings cross
//     between the versions, and users created by either log in on the
//     other;
//  4. the old replica restarts on the newer schema (the expand files are
//     compatible with it) and serves again.
func TestRollingUpgrade(t *testing.T) {
	ref := previousRelease(t)
	oldFiles, newFiles := migrationCount(t, ref), migrationCount(t, "")
	t.Logf("previous release %s (%d migration files) -> this tree (%d)", ref, oldFiles, newFiles)
	if newFiles <= oldFiles {
		t.Logf("no schema change since %s: the side-by-side run still runs, without a migration in between", ref)
	}
	oldBin := buildRelease(t, ref)
	newBin := binary(t)

	settings := sharedSettings(t, "upgradetest",
		"Service__Shutdown__ReadyDrainDelaySeconds=0", "Service__Security__Session__RefreshGraceSeconds=0")
	c := newBrowser(t)
	oldDir := t.TempDir()
	old := startReplicaIn(t, oldBin, "old ("+ref+")", freePort(t), settings, oldDir)
	old.waitReady(c)
	admin := c.login(old.base, "superAdmin", adminPassword).AccessToken
	c.do("PUT", old.base+"/api/v1/sys/config/batch", admin, []map[string]any{
		{"configKey": "sys.security.rateLimit.enabled", "configValue": "false"},
	}).expect(t, "rate limit off", 200, 0)
	upgradeLoad(t, c, "the previous release alone", []string{old.base})

	out := run(t, newBin, settings, "migrate", "--environment", "Development")
	t.Logf("migrate with this binary: %s", strings.TrimSpace(lastLine(out)))
	if want := strconv.Itoa(newFiles); newFiles > oldFiles && !strings.Contains(out, "to "+want+")") {
		t.Fatalf("migrate did not bring the schema to revision %s:\n%s", want, out)
	}
	upgradeLoad(t, c, "the previous release on the migrated schema", []string{old.base})

	cur := startReplica(t, newBin, "new", freePort(t), settings)
	cur.waitReady(c)
	both := []string{old.base, cur.base}
	upgradeLoad(t, c, "both versions", both)

	// Users made by either version log in on the other.
	for i, pair := range [][2]*replica{{old, cur}, {cur, old}} {
		account := fmt.Sprintf("rolling%d", i)
		pw := "Pass#rolling1234"
		c.do("POST", pair[0].base+"/api/v1/sys/user", admin, map[string]any{
			"account": account, "password": pw, "name": account, "orgId": 1,
		}).expect(t, "add "+account+" on "+pair[0].name, 200, 0)
		tk := c.login(pair[1].base, account, pw)
		c.do("PUT", pair[1].base+"/api/v1/personal/password", tk.AccessToken, map[string]any{"oldPassword": pw, "newPassword": pw + "2"}).
			expect(t, "first password change of "+account+" on "+pair[1].name, 200, 0)
		c.login(pair[0].base, account, pw+"2")
	}

	// An old replica that restarts now meets the newer schema.
	old.stop()
	old = startReplicaIn(t, oldBin, "old ("+ref+") restarted", freePort(t), settings, oldDir)
	old.waitReady(c)
	if newFiles > oldFiles && !old.logged("the database schema is newer than this binary and compatible with it") {
		t.Errorf("the restarted old replica did not log that it runs on a newer, compatible schema:\n%s", old.log)
	}
	upgradeLoad(t, c, "both versions, the old one restarted", []string{old.base, cur.base})

	// The rollout ends: the last old replica goes, the new one serves on.
	old.stop()
	upgradeLoad(t, c, "this release alone", []string{cur.base})
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
