// Bundles the programs that run outside the test runner:
//  - the sandbox daemon, as one self-contained file copied into the sandbox image (no node_modules
//    inside the sandbox: less to audit, faster start);
//  - the egress proxy, likewise into the egress image (Node's own modules only);
//  - the gatehouse CLI, with the published package's npm dependencies (the root package.json's
//    `dependencies`) left external and everything else, the workspaces included, bundled in.
// esbuild is used because it bundles TypeScript workspaces in well under a second; tsc stays the
// type checker. It is also `prepack`: `npm pack` ships these bundles (docs/decisions/0007).
//
// A bundle is written only when its content changed, and then by rename: the image tags hash the
// bundles, and a test or a run reading one while it is rewritten must never see half a file (nor a
// temporary file in an image context).
import { build as esbuild } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
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

// A checkout of another version (--probe-only) may predate the root `dependencies`: its orchestrator's then.
const manifest = (file) => JSON.parse(readFileSync(`${root}/${file}`, 'utf8'));
const deps = Object.keys(manifest('package.json').dependencies ?? manifest('orchestrator/package.json').dependencies);

const tempDir = path.join(root, 'node_modules', '.cache', 'gatehouse-build');
mkdirSync(tempDir, { recursive: true });

async function build(options) {
  const result = await esbuild({ ...options, write: false });
  for (const file of result.outputFiles) {
    if (existsSync(file.path) && readFileSync(file.path).equals(file.contents)) continue;
    mkdirSync(path.dirname(file.path), { recursive: true });
    // Not beside the bundle: the folders holding them are image contexts, hashed file by file.
    const temp = path.join(tempDir, `${path.basename(file.path)}.${process.pid}.tmp`);
    writeFileSync(temp, file.contents);
    renameSync(temp, file.path);
  }
}
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

// CommonJS, run by images/sandbox/agent.mjs through V8's code cache (a vm.Script, which ES modules
// cannot use on Node 20): main.ts exports runDaemon and starts nothing itself.
await build({
  ...common,
  format: 'cjs',
  entryPoints: ['sandbox-agent/src/main.ts'],
  outfile: 'images/sandbox/build/daemon.cjs',
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
await build({
  ...common,
  entryPoints: ['bench/soak.ts'],
  outfile: 'bench/dist/soak.mjs',
  external: [...deps.filter((d) => !d.startsWith('@gatehouse/')), 'vitest'],
  banner: { js: requireShim },
});
await build(probe);
console.error(
  '[gatehouse] built bench/dist/run.mjs, bench/dist/soak.mjs, bench/dist/probe.mjs, images/sandbox/build/daemon.cjs, ' +
    'images/egress/build/proxy.mjs and ' +
    'orchestrator/dist/gatehouse.mjs',
);
