#!/usr/bin/env bash
# The version a build carries (main.version; `adminkernel version`): the
# newest release tag `git describe` finds (v0.2.0, or v0.2.0-5-gabc1234
# after it, -dirty with uncommitted changes); in a clone without the tags,
# the same form computed from the newest RELEASES entry HEAD contains
# (docs/developers/development.md, "Releases"); else the commit; else dev.
set -euo pipefail
cd "$(dirname "$0")/.."
if v=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null); then
  echo "${v}"
  exit 0
fi
head=$(git rev-parse HEAD 2>/dev/null) || { echo dev; exit 0; }
dirty=""
git diff --quiet HEAD -- 2>/dev/null || dirty="-dirty"
release=""
while read -r tag commit _; do
  case "${tag}" in v[0-9]*) ;; *) continue ;; esac
  if git merge-base --is-ancestor "${commit}" "${head}" 2>/dev/null; then
    release="${tag} ${commit}"
  fi
done < <(grep -v '^#' RELEASES 2>/dev/null || true)
if [ -n "${release}" ]; then
  read -r tag commit <<<"${release}"
  n=$(git rev-list --count "${commit}..${head}")
  if [ "${n}" = 0 ]; then echo "${tag}${dirty}"; else echo "${tag}-${n}-g$(git rev-parse --short=7 "${head}")${dirty}"; fi
  exit 0
fi
echo "$(git rev-parse --short=7 "${head}")${dirty}"
