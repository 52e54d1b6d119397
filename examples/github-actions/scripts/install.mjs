// Installs gatehouse on the runner: GATEHOUSE_PACKAGE is what `npm install -g` takes, pinned: a registry name with
// an exact version (gatehouse@1.2.3, @scope/gatehouse@1.2.3), or a tarball's path or https URL from `npm pack`.
// The job that installs it then runs it with the repository's secrets, so a bare name or a range (whatever the
// registry serves today under that name) is refused.
import { spawnSync } from 'node:child_process';
import { fail, required } from './lib.mjs';

const PINNED = [
  /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*@\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/,
  /^(?:\.{0,2}\/|https:\/\/)[^\s]*\.tgz$/,
];

const pkg = required('GATEHOUSE_PACKAGE');
if (!PINNED.some((p) => p.test(pkg)))
  fail(
    `GATEHOUSE_PACKAGE ${JSON.stringify(pkg)} is not pinned: give NAME@X.Y.Z (an exact version) or a .tgz ` +
      'path or https URL from npm pack',
  );
const r = spawnSync('npm', ['install', '--global', '--no-audit', '--no-fund', pkg], { stdio: 'inherit' });
if (r.status !== 0) fail(`npm install -g ${pkg} failed (exit ${r.status ?? r.signal})`);
const v = spawnSync('gatehouse', ['--version'], { stdio: 'inherit' });
if (v.status !== 0) fail('gatehouse was installed but does not run: is the npm global bin on PATH?');
