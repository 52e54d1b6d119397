/**
 * The paths the published tarball may hold (docs/decisions/0007-published-package.md): the
 * bundles, the image build contexts and the shell helpers their scripts source. Anything else in
 * it is a source, a test or a leftover that nothing installed runs.
 */
export const ALLOWED_IN_TARBALL: readonly RegExp[] = [
  /^package\.json$/,
  /^README\.md$/,
  /^orchestrator\/bin\/gatehouse\.mjs$/,
  /^orchestrator\/dist\/gatehouse\.mjs$/,
  /^images\/(base|egress|nats|presets\/(node|python)|sandbox)\//,
  /^scripts\/lib\.sh$/,
];

/** Where the files the tarball must hold come from: the bundles (prepack) and the image scripts. */
export const REQUIRED_IN_TARBALL: readonly string[] = [
  'orchestrator/bin/gatehouse.mjs',
  'orchestrator/dist/gatehouse.mjs',
  'images/sandbox/build/daemon.cjs',
  'images/sandbox/agent.mjs',
  'images/egress/build/proxy.mjs',
  'images/sandbox/assemble-runtime.sh',
  'images/base/build-local-base.sh',
  'scripts/lib.sh',
];
