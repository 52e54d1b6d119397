// Bundles the programs that run outside the test runner:
//  - the sandbox daemon, as one self-contained file copied into the sandbox image (no node_modules
//    inside the sandbox: less to audit, faster start);
//  - the egress proxy, likewise into the egress image (Node's own modules only);
//  - the gatehouse CLI, with its npm dependencies left external.
// esbuild is used because it bundles TypeScript workspaces in well under a second; tsc stays the
// type checker.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));
// `--probe-only DIR`: bundle only bench/probe.ts of another checkout (scripts/bench-baseline.sh).
const probeOnly = process.argv[2] === '--probe-only' ? process.argv[3] : undefined;
const root = probeOnly ?? here;
const requireShim = "import { createRequire as __gh_cr } from 'node:module'; const require = __gh_cr(import.meta.url);";
const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: false,
  logLevel: 'warning',
  absWorkingDir: root,
};

const deps = Object.keys(JSON.parse(readFileSync(`${root}/orchestrator/package.json`, 'utf8')).dependencies);
const probe = {
  ...common,
  entryPoints: ['bench/probe.ts'],
  outfile: 'bench/dist/probe.mjs',
  external: deps.filter((d) => !d.startsWith('@gatehouse/')),
  banner: { js: requireShim },
};
if (probeOnly) {
  await build(probe);
  console.error(`[gatehouse] built ${probeOnly}/bench/dist/probe.mjs`);
  process.exit(0);
}

await build({
  ...common,
  entryPoints: ['sandbox-agent/src/main.ts'],
  outfile: 'images/sandbox/build/agent.mjs',
  banner: { js: requireShim },
  legalComments: 'none',
});

await build({
  ...common,
  entryPoints: ['egress-proxy/src/main.ts'],
  outfile: 'images/egress/build/proxy.mjs',
  legalComments: 'none',
});

await build({
  ...common,
  entryPoints: ['orchestrator/src/cli/main.ts'],
  outfile: 'orchestrator/dist/gatehouse.mjs',
  external: deps.filter((d) => !d.startsWith('@gatehouse/')),
  banner: { js: requireShim },
});
await build({
  ...common,
  entryPoints: ['bench/run.ts'],
  outfile: 'bench/dist/run.mjs',
  external: [...deps.filter((d) => !d.startsWith('@gatehouse/')), 'vitest'],
  banner: { js: requireShim },
});
await build(probe);
console.error(
  '[gatehouse] built bench/dist/run.mjs, bench/dist/probe.mjs, images/sandbox/build/agent.mjs, ' +
    'images/egress/build/proxy.mjs and ' +
    'orchestrator/dist/gatehouse.mjs',
);
