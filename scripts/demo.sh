#!/usr/bin/env bash
# The main job (README quick start): set up, check the machine, then start a hardened sandbox on a
# copy of the example repository and work in it through the NATS tool daemon. Idempotent.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$GATEHOUSE_ROOT"
exec </dev/null

bash scripts/setup.sh
say "gatehouse doctor"
node orchestrator/bin/gatehouse.mjs doctor
say "gatehouse sandbox smoke --repo examples/hello"
node orchestrator/bin/gatehouse.mjs sandbox smoke --repo examples/hello
