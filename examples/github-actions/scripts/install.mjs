// Installs gatehouse on the runner: GATEHOUSE_PACKAGE is what `npm install -g` takes (a registry name with a version,
// or a tarball's path or URL from `npm pack`). Pin a version: the workflow runs whatever this names.
import { spawnSync } from 'node:child_process';
import { fail, required } from './lib.mjs';

const pkg = required('GATEHOUSE_PACKAGE');
if (pkg.startsWith('-')) fail(`GATEHOUSE_PACKAGE ${JSON.stringify(pkg)} is not a package`);
const r = spawnSync('npm', ['install', '--global', '--no-audit', '--no-fund', pkg], { stdio: 'inherit' });
if (r.status !== 0) fail(`npm install -g ${pkg} failed (exit ${r.status ?? r.signal})`);
const v = spawnSync('gatehouse', ['--version'], { stdio: 'inherit' });
if (v.status !== 0) fail('gatehouse was installed but does not run: is the npm global bin on PATH?');
