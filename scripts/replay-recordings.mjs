// `npm run replay-recordings [-- --dir PATH]`: replays recorded provider traffic against the real
// provider classes (scripts/replay/replay.ts says how and what it reports). The TypeScript is
// bundled first, as scripts/build.mjs does for the CLI; the bundle goes under node_modules/.cache
// so its npm imports resolve from the project and nothing is written to the source tree.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outfile = path.join(root, 'node_modules/.cache/gatehouse/replay-recordings.mjs');
const deps = Object.keys(JSON.parse(readFileSync(path.join(root, 'orchestrator/package.json'), 'utf8')).dependencies);
await build({
  entryPoints: [path.join(root, 'scripts/replay/replay.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  external: deps.filter((d) => !d.startsWith('@gatehouse/')),
  banner: { js: "import { createRequire as __gh_cr } from 'node:module'; const require = __gh_cr(import.meta.url);" },
});
const { main } = await import(pathToFileURL(outfile).href);
// The recordings live beside the project (../shared/provider-recordings), never inside it.
process.exitCode = await main(process.argv.slice(2), path.resolve(root, '../shared/provider-recordings'));
