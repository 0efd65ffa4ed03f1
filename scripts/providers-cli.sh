#!/usr/bin/env bash
# make test-providers-cli: the BUILT `adminkernel providers test` (bin/adminkernel,
# or AK_KERNEL_BIN; not a test binary) against plugins whose verdict is
# known, each expected to pass or to fail with a given line in the report:
#
#   code_host        the bundled plugin (plugins/codehost), good settings  pass
#   code_host        the same with empty settings                          fail
#   exits            a binary that exits at once (e2e/providerscli/exitnow) fail
#   code_host leaky  the bundled plugin with its client secret added to   fail
#                    the login URL (e2e/providerscli/leaksecret)
#
# A pass must report at least MIN_CHECKS checks run and all passed; a
# report of zero checks is a failure. The secret must never appear in a
# report. Prints one line per case and fails when any case did not go as
# expected (or when none ran).
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
BIN=${AK_KERNEL_BIN:-bin/adminkernel}
MIN_CHECKS=${MIN_CHECKS:-8}
[ -x "$BIN" ] || { echo "providers-cli: $BIN is missing: make test-providers-cli builds it"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/good" "$tmp/leak" "$tmp/exit"
build() { # package output
	CGO_ENABLED=0 "$GO" build -trimpath -o "$2" "$1" || { echo "providers-cli: building $1 failed"; exit 1; }
}
build ./plugins/codehost/cmd/adminkernel-provider-code_host "$tmp/good/adminkernel-provider-code_host"
build ./e2e/providerscli/leaksecret "$tmp/leak/adminkernel-provider-code_host"
build ./e2e/providerscli/exitnow "$tmp/exit/adminkernel-provider-exits"
secret="providers-cli-secret-$RANDOM$RANDOM"
printf '{"ClientId": "providers-cli-client", "ClientSecret": "%s"}\n' "$secret" >"$tmp/settings.json"
echo '{}' >"$tmp/empty.json"

ran=0
failed=()
summary=()
# check name want(pass|fail) must-contain binary settings
check() {
	local name=$1 want=$2 needle=$3 bin=$4 settings=$5 log="$tmp/$ran.log" start=$SECONDS
	ran=$((ran + 1))
	echo "=== $name: $BIN providers test $(basename "$(dirname "$bin")")/$(basename "$bin") --settings $(basename "$settings") (want $want)"
	"$BIN" providers test "$bin" --settings "$settings" >"$log" 2>&1
	local rc=$? got=pass problem=""
	[ $rc -eq 0 ] || got=fail
	sed 's/^/    | /' "$log"
	local counts
	counts=$(grep -Eo '^[0-9]+ checks run, [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	if [ "$got" != "$want" ]; then
		problem="exit status $rc, want $want"
	elif ! grep -qF -- "$needle" "$log"; then
		problem="the report lacks \"$needle\""
	elif grep -qF -- "$secret" "$log"; then
		problem="the report shows the client secret"
	elif [ "$want" = pass ]; then
		local run passed
		read -r run passed <<<"$(sed -E 's/^([0-9]+) checks run, ([0-9]+) passed.*/\1 \2/' <<<"$counts")"
		if [ -z "$counts" ] || [ "$run" -lt "$MIN_CHECKS" ] || [ "$passed" != "$run" ]; then
			problem="a pass must report at least $MIN_CHECKS checks run, all passed; got \"${counts:-no count}\""
		fi
	fi
	local line
	line=$(printf '%-34s want %-4s got %-4s %-36s %3ss' "$name" "$want" "$got" "${counts:-(no checks run)}" $((SECONDS - start)))
	if [ -n "$problem" ]; then
		failed+=("$name")
		summary+=("$line  WRONG: $problem")
	else
		summary+=("$line  ok")
	fi
}

check "code_host, good settings" pass "the plugin passed the conformance kit" "$tmp/good/adminkernel-provider-code_host" "$tmp/settings.json"
check "code_host, empty settings" fail "the plugin failed the conformance kit" "$tmp/good/adminkernel-provider-code_host" "$tmp/empty.json"
check "a plugin that exits at once" fail "starting" "$tmp/exit/adminkernel-provider-exits" "$tmp/settings.json"
check "code_host leaking its secret" fail "contains the value of the secret setting ClientSecret" "$tmp/leak/adminkernel-provider-code_host" "$tmp/settings.json"

echo
echo "--- providers test summary ($ran cases)"
printf '%s\n' "${summary[@]}"
if [ "$ran" -eq 0 ]; then
	echo "FAIL: no case ran"
	exit 1
fi
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: ${failed[*]}"
	exit 1
fi
echo "ok: $ran cases as expected"
