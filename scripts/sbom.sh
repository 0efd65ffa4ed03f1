#!/usr/bin/env bash
# sbom.sh NAME BINARY...: an SPDX 2.3 tag-value software bill of materials of
# the Go modules the binaries were built from (read from each binary's
# embedded build information with `go version -m`): one package per module
# and version, with its Go module purl, all of them dependencies of the
# release. Written by make dist into each archive (SBOM.spdx).
set -euo pipefail
name=$1; shift
# Reproducible: the time is the commit's, the namespace the release's name
# and commit; the main module (built "(devel)") carries the release version.
created=$(date -u -d "@$(git log -1 --format=%ct 2>/dev/null || echo 0)" +%Y-%m-%dT%H:%M:%SZ)
ns="https://adminkernel.dev/spdx/${name}-$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
release=${SBOM_VERSION:-NOASSERTION}
mods=$(for b in "$@"; do go version -m "${b}"; done | awk '$1=="mod"||$1=="dep"{print $2" "$3}' | sort -u)
[ -n "${mods}" ] || { echo "sbom: no module information in $*" >&2; exit 1; }
cat <<HDR
SPDXVersion: SPDX-2.3
DataLicense: CC0-1.0
SPDXID: SPDXRef-DOCUMENT
DocumentName: ${name}
DocumentNamespace: ${ns}
Creator: Tool: adminkernel-scripts/sbom.sh
Created: ${created}

PackageName: ${name}
SPDXID: SPDXRef-Release
PackageDownloadLocation: NOASSERTION
FilesAnalyzed: false
Relationship: SPDXRef-DOCUMENT DESCRIBES SPDXRef-Release
HDR
i=0
while read -r path version; do
  i=$((i + 1))
  [ "${version}" = "(devel)" ] && version=${release}
  cat <<PKG

PackageName: ${path}
SPDXID: SPDXRef-Package-${i}
PackageVersion: ${version}
PackageDownloadLocation: NOASSERTION
FilesAnalyzed: false
ExternalRef: PACKAGE-MANAGER purl pkg:golang/${path}@${version}
Relationship: SPDXRef-Release DEPENDS_ON SPDXRef-Package-${i}
PKG
done <<<"${mods}"
