// The preparation step of a derived run image (orchestrator/src/sandbox/run-image.ts), run as root
// by the bundled node at build time: it needs no shell and no tool from the toolchain image.
//  - checks that the image has bash (commands and the git wrapper run in it) and refuses otherwise;
//  - adds uid/gid 10001 `sandbox` (home /tmp) to /etc/passwd and /etc/group unless the ids exist,
//    so that git, whoami and ssh know the command user;
//  - makes /workspace (owned by 10001, emptied) and /var/gatehouse (root's, 0700), the daemon's state.
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';

const UID = 10001;

function fail(message) {
  process.stderr.write(`gatehouse: ${message}\n`);
  process.exit(1);
}

// The daemon starts every command as /bin/bash -c, and the wrapper's shebang is /bin/bash.
const bash = '/bin/bash';
if (!existsSync(bash)) {
  fail(
    'this image has no bash at /bin/bash: gatehouse runs commands and its git wrapper with it. ' +
      'Use an image that has bash, or build one FROM this image that installs it.',
  );
}
if (!existsSync('/bin/sh')) fail('this image has no /bin/sh: gatehouse needs a POSIX shell at /bin/sh.');

function hasId(file, field) {
  if (!existsSync(file)) return false;
  return readFileSync(file, 'utf8')
    .split('\n')
    .some((line) => line.split(':')[field] === String(UID));
}

function appendLine(file, line) {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  appendFileSync(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}${line}\n`, { mode: 0o644 });
}

mkdirSync('/etc', { recursive: true });
if (!hasId('/etc/passwd', 2)) appendLine('/etc/passwd', `sandbox:x:${UID}:${UID}:gatehouse sandbox:/tmp:/bin/false`);
if (!hasId('/etc/group', 2)) appendLine('/etc/group', `sandbox:x:${UID}:`);

// A folder gatehouse mounts on (the workspace volume, /tmp's tmpfs, the daemon's state) must be a
// real one: Docker mounts where a symbolic link leads, and chown, chmod and emptying below would
// follow it too, handing the link's target (say /opt/gatehouse/bin) to the command user.
function realDir(dir) {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (st && !st.isDirectory()) rmSync(dir, { force: true });
  mkdirSync(dir, { recursive: true });
}
realDir('/workspace');
realDir('/var/gatehouse');
realDir('/tmp');

// Docker fills a fresh workspace volume with what the image has at /workspace: only the copied
// repository may be there, so whatever the toolchain image keeps at that path is left out.
mkdirSync('/workspace', { recursive: true });
for (const entry of readdirSync('/workspace')) rmSync(`/workspace/${entry}`, { recursive: true, force: true });
chownSync('/workspace', UID, UID);
chmodSync('/workspace', 0o755);
mkdirSync('/var/gatehouse', { recursive: true });
chownSync('/var/gatehouse', 0, 0);
chmodSync('/var/gatehouse', 0o700);
mkdirSync('/tmp', { recursive: true });
chmodSync('/tmp', 0o1777);

const st = statSync('/workspace');
if (st.uid !== UID) fail('could not give /workspace to uid 10001');
process.stdout.write(`gatehouse: prepared (bash at ${bash})\n`);
