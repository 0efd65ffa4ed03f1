#!/usr/bin/env bash
# node-test.sh <node --test arguments...>: `node --test` with the spec
# reporter, and scripts/node-test-count.mjs counting the tests of each
# file. Fails when node --test fails, and also when it ran no test at all,
# a file ran none, or a test was skipped (node --test passes all three).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
node --test --test-reporter=spec --test-reporter-destination=stdout \
	--test-reporter="$here/node-test-count.mjs" --test-reporter-destination="$summary" "$@"
rc=$?
cat "$summary"
[ $rc -eq 0 ] || exit $rc
tail -n 1 "$summary" | grep -qx 'node-test-count: ok' || exit 1
