#!/usr/bin/env bash
# The soak (not part of the tests; docs/scaling.md): sets up, starts a second Docker engine of its
# own (scripts/second-docker-host.sh, in its own netns and directory so a test's second engine is
# left alone), copies the images runs need to it, then runs bench/dist/soak.mjs. Prints one JSON
# document on stdout and merges `warmPool` and `soak` into bench/results/latest.json. Whatever it
# started is stopped on the way out, failure and interrupt included. Idempotent; no stdin.
# Bounded: each step has a timeout, the soak itself SOAK_TIMEOUT seconds (default 1800).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$GATEHOUSE_ROOT"
exec </dev/null

export GATEHOUSE_DH2_NETNS="${GATEHOUSE_DH2_NETNS:-gatehouse-soak}"
export GATEHOUSE_DH2_VETH="${GATEHOUSE_DH2_VETH:-gh-soak-h}"
export GATEHOUSE_DH2_HOST_IP="${GATEHOUSE_DH2_HOST_IP:-10.214.0.1}"
export GATEHOUSE_DH2_ENGINE_IP="${GATEHOUSE_DH2_ENGINE_IP:-10.214.0.2}"
export GATEHOUSE_DH2_DIR="${GATEHOUSE_DH2_DIR:-/tmp/gatehouse-soak-host-2}"

second_host=0
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ "$second_host" == 1 ]]; then
    timeout 300 bash scripts/second-docker-host.sh stop >&2 || say "warning: stopping the second engine failed"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

timeout 1800 bash scripts/setup.sh >&2

second_host=1
# A second engine left by an interrupted soak is stopped first: start from nothing.
timeout 300 bash scripts/second-docker-host.sh stop >&2
engine_env="$(timeout 180 bash scripts/second-docker-host.sh start)"
SOAK_DOCKER_HOST2="$(printf '%s\n' "$engine_env" | sed -n 's/^DOCKER_HOST=//p')"
SOAK_DOCKER_CERT_PATH2="$(printf '%s\n' "$engine_env" | sed -n 's/^DOCKER_CERT_PATH=//p')"
[[ -n "$SOAK_DOCKER_HOST2" && -n "$SOAK_DOCKER_CERT_PATH2" ]] || die "the second engine printed no DOCKER_HOST"
export SOAK_DOCKER_HOST2 SOAK_DOCKER_CERT_PATH2

mapfile -t images < <(timeout 900 node bench/dist/soak.mjs --images)
[[ ${#images[@]} -gt 0 ]] || die "no image tags from bench/dist/soak.mjs --images"
say "copying ${#images[@]} images to the second engine"
timeout 900 bash scripts/second-docker-host.sh load-images "${images[@]}" >&2

say "soak: $(date -u +%FT%TZ)"
timeout --kill-after=30 "${SOAK_TIMEOUT:-1800}" node bench/dist/soak.mjs
