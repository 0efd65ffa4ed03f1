#!/usr/bin/env bash
# make dist-check: the linux/amd64 archive of `make dist`, extracted into a
# temporary directory, must verify its SHA256SUMS, report the version it
# was built with, carry the docs its README links to, an SPDX SBOM and the
# dashboard, pass `config` in Production; `serve` on the archive's default
# settings must refuse an empty database (Production never changes the
# schema by itself), `migrate` create it, and `serve` then come to ready on
# the embedded SQLite default, answer /metrics on the metrics listener with
# every metric the Grafana dashboard queries, then stop on SIGTERM; the
# systemd unit must parse.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DIST_DIR:-dist}
VERSION=${VERSION:-$(bash scripts/version.sh)}
name="adminkernel-${VERSION}-linux-amd64"
[ -f "${OUT}/${name}.tar.gz" ] || { echo "dist-check: ${OUT}/${name}.tar.gz is missing: run make dist"; exit 1; }
(cd "${OUT}" && sha256sum -c --quiet SHA256SUMS)
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "${pid}" ] && kill -9 "${pid}" 2>/dev/null || true; rm -rf "${tmp}"; }
trap cleanup EXIT
tar -C "${tmp}" -xzf "${OUT}/${name}.tar.gz"
dir="${tmp}/${name}"
cd "${dir}"
sha256sum -c --quiet SHA256SUMS
for f in adminkernel appsettings.json README.md CHANGELOG.md adminkernel.service grafana-dashboard.json SBOM.spdx docs/README.md \
  plugins/adminkernel-provider-enterprise_chat plugins/adminkernel-provider-team_chat \
  plugins/adminkernel-provider-code_host plugins/adminkernel-provider-social_chat; do
  [ -e "${f}" ] || { echo "dist-check: the archive has no ${f}"; exit 1; }
done
# Every relative link of the README (and of the docs index) resolves inside
# the archive.
python3 - <<'PY'
import os, re, sys
bad = []
for page in ["README.md", "docs/README.md"]:
    for target in re.findall(r'\]\(([^)#\s]+)(?:#[^)]*)?\)', open(page).read()):
        if "://" in target or target.startswith("mailto:"):
            continue
        if not os.path.exists(os.path.join(os.path.dirname(page), target)):
            bad.append(f"{page} -> {target}")
if bad:
    sys.exit("dist-check: links that do not resolve inside the archive: " + ", ".join(bad))
print("dist-check: the README's and the docs index's links resolve inside the archive")
PY
grep -q '^SPDXVersion: SPDX-2.3' SBOM.spdx && grep -q "pkg:golang/github.com/adminkernel/kernel@${VERSION}" SBOM.spdx ||
  { echo "dist-check: SBOM.spdx is not an SPDX document naming the kernel at ${VERSION}"; exit 1; }
echo "dist-check: SBOM.spdx lists $(grep -c '^PackageName' SBOM.spdx) packages"
got=$(./adminkernel version)
case "${got}" in *"${VERSION}"*) ;; *) echo "dist-check: version printed '${got}', want ${VERSION}"; exit 1 ;; esac

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
http_port=$(port); metrics_port=$(port)
export Service__Security__Jwt__SigningKey="dist-check-signing-key-0123456789abcdef"
export Service__Http__ListenAddress="http://127.0.0.1:${http_port}"
export Service__Telemetry__MetricsAddress="127.0.0.1:${metrics_port}"
# Only this kernel's settings: nothing from the caller's environment.
for v in $(env | sed -n 's/^\(\(Service\|Api\|Logging\)__[^=]*\)=.*/\1/p'); do
  case "${v}" in Service__Security__Jwt__SigningKey|Service__Http__ListenAddress|Service__Telemetry__MetricsAddress) ;; *) unset "${v}" ;; esac
done
./adminkernel config --environment Production --content-root "${dir}" > "${tmp}/config.out"
# The archive's defaults follow the runbook: no schema change at start.
rc=0; timeout 60 ./adminkernel serve --environment Production --content-root "${dir}" > "${tmp}/refused.log" 2>&1 || rc=$?
if [ "${rc}" -eq 0 ] || ! grep -q 'adminkernel migrate' "${tmp}/refused.log"; then
  echo "dist-check: serve on an empty database in Production did not refuse and name migrate (exit ${rc})"; tail -n 5 "${tmp}/refused.log"; exit 1
fi
echo "dist-check: serve refused the empty database and named migrate"
./adminkernel migrate --environment Production --content-root "${dir}"
./adminkernel serve --environment Production --content-root "${dir}" > "${tmp}/serve.log" 2>&1 &
pid=$!
ready=
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:${http_port}/health/ready" > /dev/null 2>&1; then ready=1; break; fi
  kill -0 "${pid}" 2>/dev/null || break
  sleep 0.5
done
if [ -z "${ready}" ]; then echo "dist-check: serve did not become ready"; tail -n 40 "${tmp}/serve.log"; exit 1; fi
[ -f data/superadmin-password.txt ] || { echo "dist-check: Production did not write the generated password file"; exit 1; }
curl -s -o /dev/null "http://127.0.0.1:${http_port}/api/v1/ping" || true
curl -s -o /dev/null -H 'Content-Type: application/json' -d '{"account":"nobody","password":"wrong-Pass#1"}' \
  "http://127.0.0.1:${http_port}/api/v1/auth/login" || true
curl -fsS "http://127.0.0.1:${metrics_port}/metrics" > "${tmp}/metrics.txt"
cd - > /dev/null
python3 - "${tmp}/metrics.txt" deploy/grafana-dashboard.json docs/operators/operations.md <<'PY'
import json, re, sys
# Families the kernel exported in this run (# TYPE lines); a labelled family
# with no series yet (no plugin configured, no refresh made) is not among
# them, so a name is also accepted when docs/operators/operations.md documents it.
exported = set(re.findall(r'^# TYPE (\S+)', open(sys.argv[1]).read(), re.M))
documented = open(sys.argv[3]).read()
dash = json.load(open(sys.argv[2]))
exprs = [t['expr'] for p in dash['panels'] for t in p.get('targets', [])]
names = set(n for e in exprs for n in re.findall(r'\b((?:adminkernel|go_sql|process|go)_[a-z_]+)\b', e))
def family(n):
    return re.sub(r'_(bucket|sum|count)$', '', n)
def known(n):
    f = family(n)
    base = re.sub(r'_(running|waiting|concurrency|queue_capacity)$', '', f)
    return f in exported or n in exported or f'`{f}`' in documented or f'`{base}_' in documented
missing = sorted(n for n in names if not known(n))
if not exprs or missing:
    sys.exit(f"dist-check: the dashboard queries metrics the kernel neither exports nor documents: {missing or 'no queries'}")
print(f"dist-check: the dashboard's {len(names)} metrics are exported or documented ({len(exported)} families exported)")
PY
kill -TERM "${pid}"
wait "${pid}" || { echo "dist-check: serve exited with $? on SIGTERM"; tail -n 20 "${tmp}/serve.log"; exit 1; }
pid=
if command -v systemd-analyze > /dev/null; then
  unit="${tmp}/adminkernel.service"
  sed "s|/opt/adminkernel|${dir}|g" "${dir}/adminkernel.service" > "${unit}"
  rc=0; out=$(systemd-analyze verify "${unit}" 2>&1) || rc=$?
  if [ "${rc}" -ne 0 ] || grep -v "^$" <<<"${out}"; then echo "dist-check: systemd-analyze verify reported the above (exit status ${rc})"; exit 1; fi
  echo "dist-check: systemd-analyze verify: the unit parses"
elif [ "${DIST_CHECK_SKIP_UNIT:-0}" = 1 ]; then
  echo "dist-check: systemd-analyze not installed; the unit was NOT verified (DIST_CHECK_SKIP_UNIT=1)"
else
  echo "dist-check: systemd-analyze is missing, so the systemd unit cannot be verified: install systemd, or set DIST_CHECK_SKIP_UNIT=1 to skip that check knowingly"
  exit 1
fi
echo "dist-check: ${name} ok"
