#!/usr/bin/env bash
# Runs every fuzz target of the repository for a short time each, one after
# the other, and fails when any of them fails.
#
#   scripts/fuzz.sh                   every target, FUZZTIME (default 5s) each
#   FUZZTIME=1m scripts/fuzz.sh       longer
#   scripts/fuzz.sh FuzzRender ...    only the named targets
#
# FUZZMINIMIZETIME (default 2s) bounds the minimisation of each new corpus
# entry and of a failing input: the kernel targets run one HTTP request per
# input, and Go's default (60s) would spend a short run minimising.
# Seeds and regression inputs live in <package>/testdata/fuzz/<Target>/ and
# also run as ordinary tests (go test ./...); a failing input found here is
# written there — keep it as a regression seed once the bug is fixed.
# Corpus entries found while fuzzing go to $(go env GOCACHE)/fuzz.
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-5s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-2s}
GO=${GO:-go}

# package target [VAR=value: the run's environment, also shown in its label]
# FuzzJSONEndpoints runs a second time with the kernel on PostgreSQL
# (ADMINKERNEL_TEST_DB, see host/kerneltest); it needs the PostgreSQL of
# the tests (dbtest) and fails clearly without it. FUZZ_SKIP_PG=1 leaves
# that run out.
TARGETS=(
	"./host/fuzz FuzzJSONEndpoints"
	"./host/fuzz FuzzQueryEndpoints"
	"./host/fuzz FuzzAnonymous"
	"./config FuzzLoad"
	"./host/database/sqllog FuzzRender"
	"./host/cache/memcache FuzzTake"
	"./host/outbound FuzzPolicy"
	"./host/outbound FuzzCheckHost"
	"./host/file/link FuzzLinkVerify"
	"./host/spreadsheet FuzzReadAt"
	"./host/mfa/passkey FuzzFinish"
	"./host/job FuzzParseCron"
	"./host/file FuzzChunkMeta"
	"./host/notice FuzzNoticeAction"
)
[ "${FUZZ_SKIP_PG:-0}" = 1 ] || TARGETS+=("./host/fuzz FuzzJSONEndpoints ADMINKERNEL_TEST_DB=PostgreSQL")

selected() {
	[ $# -eq 0 ] && return 0
	local name=$1
	shift
	for want in "${SELECT[@]}"; do
		[ "$want" = "$name" ] && return 0
	done
	return 1
}
SELECT=("$@")
# A named target that is not in TARGETS would run nothing: refuse it.
for want in "${SELECT[@]}"; do
	known=0
	for entry in "${TARGETS[@]}"; do
		read -r _ name _ <<<"$entry"
		[ "$name" = "$want" ] && known=1
	done
	[ $known = 1 ] || { echo "fuzz: no target $want in scripts/fuzz.sh (TARGETS)"; exit 1; }
done

# run_target package target envvar log: one fuzzing run of a target.
run_target() {
	env ${3:+"$3"} "$GO" test -run '^$' -fuzz "^${2}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$1" >"$4" 2>&1
}

# deadline_race log: the run failed with nothing but the coordinator's
# "context deadline exceeded" (no input written, no panic, no test error).
deadline_race() {
	grep -aq '^    context deadline exceeded$' "$1" &&
		! grep -aqE 'Failing input written to|panic:|_test\.go:[0-9]+:' "$1"
}

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
failed=()
summary=()
ran=0
start_all=$SECONDS
for entry in "${TARGETS[@]}"; do
	read -r pkg name envvar <<<"$entry"
	if [ ${#SELECT[@]} -gt 0 ] && ! selected "$name" "${SELECT[@]}"; then
		continue
	fi
	label=$name
	[ -z "$envvar" ] || label="$name@${envvar#*=}"
	log="$logdir/$label.log"
	echo "=== $label ($pkg, $FUZZTIME${envvar:+, $envvar})"
	start=$SECONDS
	run_target "$pkg" "$name" "$envvar" "$log"
	rc=$?
	# Go 1.26's fuzzing coordinator can report a bare "context deadline
	# exceeded" when -fuzztime ends while a worker is mid-call (a race in
	# internal/fuzz, go.dev/issue/75804, fixed in Go 1.27): no input failed
	# and none was written. Only that exact outcome is run once more; any
	# written input, panic or test failure fails at once.
	if [ $rc -ne 0 ] && deadline_race "$log"; then
		echo "    (Go fuzzing coordinator deadline race, go.dev/issue/75804: no failing input; running $label once more)"
		run_target "$pkg" "$name" "$envvar" "$log"
		rc=$?
	fi
	took=$((SECONDS - start))
	execs=$(grep -ao 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')
	[ -n "$execs" ] || execs=0
	# Seeds and the cached corpus ($(go env GOCACHE)/fuzz) are run once
	# before fuzzing starts, within FUZZTIME: say so when that took it all.
	note=""
	if ! grep -aq 'now fuzzing' "$log"; then
		note="  (baseline coverage $(grep -ao 'gathering baseline coverage: [0-9]*/[0-9]*' "$log" | tail -1 | awk '{print $4}') only)"
	fi
	# go test exits 0 when -fuzz matches no target ("no fuzz tests to
	# fuzz", a renamed target) or when no input ran: both checked nothing.
	if [ $rc -eq 0 ] && grep -aq 'no fuzz tests to fuzz' "$log"; then
		rc=1
		note="  (no fuzz target $name in $pkg)"
	elif [ $rc -eq 0 ] && [ "$execs" -eq 0 ] && ! grep -aqE 'gathering baseline coverage: [1-9]' "$log"; then
		rc=1
		note="  (no input ran)"
	fi
	ran=$((ran + 1))
	if [ $rc -ne 0 ]; then
		failed+=("$label")
		summary+=("$(printf '%-30s FAIL  %8s execs  %4ss' "$label" "$execs" "$took")$note")
		# The failure, without the progress lines.
		grep -av '^fuzz: elapsed' "$log" | tail -n 60
		grep -a 'Failing input written to' "$log" | sed "s|^ *Failing input written to |failing input: $pkg/|"
	else
		summary+=("$(printf '%-30s ok    %8s execs  %4ss' "$label" "$execs" "$took")$note")
	fi
done

echo
echo "--- fuzz summary ($ran targets, FUZZTIME=$FUZZTIME each, $((SECONDS - start_all))s in all)"
printf '%s\n' "${summary[@]}"
if [ $ran -eq 0 ]; then
	echo "FAIL: no fuzz target ran"
	exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: ${failed[*]}"
	exit 1
fi
