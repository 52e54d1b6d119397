#!/usr/bin/env bash
# The main job (README quick start): set up, check the machine, then run an agent on the example
# repository with a failing test, in a hardened sandbox, with the scripted model. The repository
# is not changed (no --apply): the diff is saved beside the run's log. Idempotent.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$GATEHOUSE_ROOT"
exec </dev/null

bash scripts/setup.sh
say "gatehouse doctor"
node orchestrator/bin/gatehouse.mjs doctor
say 'gatehouse run "fix the failing tests" --repo examples/failing-test --policy examples/failing-test/.gatehouse/policy.json --model scripted:examples/scripts/fix-failing-test.json'
node orchestrator/bin/gatehouse.mjs run "fix the failing tests" \
  --repo examples/failing-test \
  --policy examples/failing-test/.gatehouse/policy.json \
  --model scripted:examples/scripts/fix-failing-test.json
