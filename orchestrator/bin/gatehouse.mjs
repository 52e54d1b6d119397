#!/usr/bin/env node
// The CLI is bundled by `npm run build` (scripts/build.mjs); this shim says so if it was not run.
import { existsSync } from 'node:fs';
const bundle = new URL('../dist/gatehouse.mjs', import.meta.url);
if (!existsSync(bundle)) {
  console.error(
    'gatehouse: the CLI is not built yet. Run `npm run build` in the repository root (or `npm test`, which builds).',
  );
  process.exit(2);
}
await import(bundle.href);
