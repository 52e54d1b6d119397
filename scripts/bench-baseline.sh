#!/usr/bin/env bash
# Prepares an older gatehouse checkout for the bench to compare against in the same run
# (bench/boundary.ts): a detached git worktree at REF, its npm dependencies and bundles, and the
# current bench/probe.ts bundled against it. Cached by commit; prints the checkout's path.
#   bash scripts/bench-baseline.sh REF
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$GATEHOUSE_ROOT"
exec </dev/null

ref="${1:?usage: bench-baseline.sh REF}"
sha="$(git rev-parse --verify "${ref}^{commit}" 2>/dev/null)" \
  || die "bench baseline $ref is not a commit of this repository (a shallow clone lacks history: git fetch --unshallow)"
cache="${GATEHOUSE_BENCH_CACHE:-${TMPDIR:-/tmp}/gatehouse-bench}"
dir="$cache/baseline-$sha"
if [[ ! -f "$dir/.ready" ]]; then
  say "bench baseline: preparing $sha in $dir (once)"
  mkdir -p "$cache"
  git worktree remove --force "$dir" >/dev/null 2>&1 || rm -rf "$dir"
  git worktree prune
  git worktree add --detach "$dir" "$sha" >&2 || die "git worktree add $dir failed"
  (cd "$dir" && npm ci --no-audit --no-fund --prefer-offline >&2) || die "npm ci in $dir failed"
  (cd "$dir" && node scripts/build.mjs >&2) || die "building the baseline's bundles failed"
  touch "$dir/.ready"
fi
# The probe is today's (the same measurement on both sides), compiled against the baseline's code.
cp bench/probe.ts bench/stats.ts "$dir/bench/"
node scripts/build.mjs --probe-only "$dir" >&2 || die "bundling the probe against the baseline failed"
printf '%s\n' "$dir"
