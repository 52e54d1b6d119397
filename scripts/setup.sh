#!/usr/bin/env bash
# Prepare this checkout to run gatehouse: npm dependencies, a Docker engine,
# the bundles (scripts/build.mjs) and the container images. Idempotent; needs
# no stdin (fine with CI=true).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cd "$GATEHOUSE_ROOT"
exec </dev/null

ensure_npm_deps
ensure_crun
ensure_docker_engine
ensure_patchelf
ensure_chromium

say "building bundles: node scripts/build.mjs"
node scripts/build.mjs || die "node scripts/build.mjs failed"

say "building images: node orchestrator/bin/gatehouse.mjs images build"
node orchestrator/bin/gatehouse.mjs images build || die "gatehouse images build failed"

say "setup done"
