#!/usr/bin/env bash
# make dist: versioned release archives for linux/amd64 and linux/arm64
# (docs/operators/install.md "Release archives"). Each archive holds the host
# (console embedded), the four provider plugins, the default
# appsettings.json, the systemd unit, the Grafana dashboard, the README, the
# CHANGELOG and docs/ (so the README's links work inside the archive), an
# SPDX software bill of materials of the modules the binaries were built
# from (SBOM.spdx), and a SHA256SUMS of its binaries (the values
# Service:ExternalAuth:PluginSha256 pins take); dist/SHA256SUMS lists the
# archives.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${VERSION:-$(bash scripts/version.sh)}
OUT=${DIST_DIR:-dist}
ARCHES=${DIST_ARCHES:-amd64 arm64}
LDFLAGS="-s -w -X main.version=${VERSION}"
rm -rf "${OUT}"
mkdir -p "${OUT}"
for arch in ${ARCHES}; do
  name="adminkernel-${VERSION}-linux-${arch}"
  dir="${OUT}/${name}"
  mkdir -p "${dir}/plugins"
  echo "dist: ${name}"
  GOOS=linux GOARCH="${arch}" CGO_ENABLED=0 go build -trimpath -ldflags "${LDFLAGS}" -o "${dir}/adminkernel" ./host/cmd/adminkernel
  GOOS=linux GOARCH="${arch}" CGO_ENABLED=0 go build -trimpath -ldflags "${LDFLAGS}" -o "${dir}/plugins/" ./plugins/...
  install -m 0644 deploy/appsettings.json README.md CHANGELOG.md deploy/adminkernel.service deploy/grafana-dashboard.json "${dir}/"
  mkdir -p "${dir}/docs"
  (cd docs && find . -type f \( -name '*.md' -o -name '*.png' \) -print0 | xargs -0 -I{} install -D -m 0644 {} "../${dir}/docs/{}")
  SBOM_VERSION="${VERSION}" bash scripts/sbom.sh "${name}" "${dir}/adminkernel" "${dir}"/plugins/* > "${dir}/SBOM.spdx"
  (cd "${dir}" && sha256sum adminkernel plugins/* > SHA256SUMS)
  # Reproducible archive: sorted names, fixed owner and time.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2000-01-01 00:00Z' \
    -C "${OUT}" -czf "${OUT}/${name}.tar.gz" "${name}"
  rm -rf "${dir}"
done
(cd "${OUT}" && sha256sum ./*.tar.gz | sed 's| \./| |' > SHA256SUMS)
cat "${OUT}/SHA256SUMS"
