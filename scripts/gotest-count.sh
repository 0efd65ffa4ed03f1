#!/usr/bin/env bash
# gotest-count.sh [-q] <min> <go test arguments...>: runs `go test -v` with
# the arguments and fails unless at least <min> top-level tests passed and
# none was skipped or failed. go test itself exits 0 when a -run pattern
# matches nothing ("testing: warning: no tests to run") or every test skips:
# a renamed test, or one that skips when its service is missing, would then
# pass CI having checked nothing. Prints the tests that ran and the count.
# -q prints only the PASS/FAIL/SKIP lines of the log (and the whole log on
# a failure); otherwise the whole log is printed. GREP, when set, is an
# extended regular expression of further log lines to print with -q.
set -uo pipefail
quiet=0
if [ "${1:-}" = -q ]; then
	quiet=1
	shift
fi
min=${1:?usage: gotest-count.sh [-q] <min> <go test arguments...>}
shift
GO=${GO:-go}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$GO" test -v "$@" >"$log" 2>&1
rc=$?
if [ $quiet = 1 ] && [ $rc -eq 0 ]; then
	grep -aE "^(--- |ok |FAIL|PASS)${GREP:+|$GREP}" "$log"
else
	cat "$log"
fi
passed=$(grep -acE '^--- PASS: ' "$log")
skipped=$(grep -acE '^--- SKIP: ' "$log")
failed=$(grep -acE '^--- FAIL: ' "$log")
empty=$(grep -ac 'no tests to run' "$log")
echo "gotest-count: $passed tests passed, $skipped skipped, $failed failed (go test $*)"
if [ $rc -ne 0 ]; then
	exit $rc
fi
if [ "$empty" -gt 0 ] || [ "$passed" -lt "$min" ] || [ "$skipped" -gt 0 ]; then
	echo "gotest-count: want at least $min tests passed and none skipped: a pattern that matches nothing, or a skip, checks nothing"
	exit 1
fi
