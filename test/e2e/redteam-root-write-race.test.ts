import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, rootExec, run, sh, startDriver } from '../support/sandbox';

/**
 * Red team (issue 10, deliverables 1 and 3): the daemon writes files as root with DAC_OVERRIDE.
 * write_file of a path whose directories are missing runs `mkdir -p` and then hands the new
 * directories to the command user with chown, which FOLLOWS symbolic links (file-io.ts giveDirs), and
 * creates its temporary file by a path whose directory components are followed too. A command user
 * process that outlives its exec (see redteam-survivor.test.ts) watches for the first directory the
 * daemon creates, renames it away and puts a link to /var/gatehouse in its place: the rest of the
 * `mkdir -p`, the chown and the file land in the daemon's private state directory, which ends up
 * owned by the command user.
 */
const RACER = `
use POSIX ();
POSIX::setsid();
# Phase 1: hop (each generation forks the next and exits) for 4 s, past the daemon's kill pass.
my $t0 = time;
for (my $n = 0; ; $n++) {
  my $pid = fork;
  exit 0 if !defined $pid || $pid > 0;
  last if time - $t0 >= 4;
  exit 0 if $n > 5_000_000;
}
# Phase 2: the first survivor races; bounded by 150 attempts, 120 s, or /tmp/hop.stop.
exit 0 unless mkdir "/tmp/racer.lock";
open(my $p, ">", "/tmp/racer.pid"); print $p "$$\\n"; close $p;
chdir "/workspace/w" or exit 1;
my ($k, $end) = (1, time + 120);
while ($k <= 150 && time < $end && ! -e "/tmp/hop.stop") {
  my @st = lstat("d$k");
  next unless @st;
  if (-d _ && $st[4] == 0 && rename("d$k", "old$k")) {
    symlink("/var/gatehouse", "d$k");
    open(my $l, ">>", "/tmp/racer.log"); print $l "swapped d$k\\n"; close $l;
  }
  $k++;
}
`;

/** Every process of uid 10001 in the sandbox, seen by root around the daemon. */
const LIST_COMMAND_USER =
  'for p in /proc/[0-9]*; do grep -q "^Uid:\\s*10001" $p/status 2>/dev/null && echo "$p"; done; true';

const ATTEMPTS = 40;
/** Deep enough that the daemon's mkdir -p and chowns take milliseconds, the window the racer needs. */
const DEEP = 'a/'.repeat(300);

describe("red team: the daemon's root file operations raced by a surviving command process", () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    // Its thirty forking chains held the daemon's heartbeat for 2.1 s in a fresh-clone CI (as in
    // redteam-survivor): 10 s, the product's default.
    driver = await startDriver({ lostAfterMs: 10_000 });
    sandbox = await driver.createSandbox({ runId: newId('run'), repoDir: makeRepo() });
  });
  afterAll(async () => {
    await rootExec(driver, sandbox, ['touch', '/tmp/hop.stop']).catch(() => undefined);
    await driver?.close();
  });

  it('write_file never creates, chowns or writes anything outside the workspace', async () => {
    await sh(sandbox, `mkdir -p w && cat > /tmp/racer.pl <<'EOF_RACER'\n${RACER}\nEOF_RACER`);
    // Since the daemon sweeps the command user's processes atomically after each exec (users.ts),
    // no racer outlives its exec any more (redteam-survivor.test.ts). The second line is tested on
    // its own: a racer of uid 10001 started around the daemon, through `docker exec`, stands in for
    // a survivor, and the daemon's writes must still not reach outside the workspace.
    const survivors = await run(
      sandbox,
      'exec',
      {
        command:
          'for i in $(seq 30); do setsid perl /tmp/racer.pl </dev/null >/dev/null 2>&1 & done; sleep 1; echo started',
      },
      { timeoutMs: 20_000 },
    );
    expect(survivors.output).toContain('started');
    // The sweep runs after the exec's reply and every later call waits for it; under CI load it took
    // longer than the fixed second this test used to wait (a CI failure). So look after the next call
    // has been let through: a listing starts no process, so no later sweep hides a survivor.
    await run(sandbox, 'list', {}, { timeoutMs: 20_000 });
    expect((await rootExec(driver, sandbox, ['sh', '-c', LIST_COMMAND_USER])).output.trim()).toBe('');
    await rootExec(driver, sandbox, ['rm', '-rf', '/tmp/racer.lock', '/tmp/racer.pid']);
    const exec = await driver.docker
      .getContainer(sandbox.info.containerId)
      .exec({ Cmd: ['setsid', 'perl', '/tmp/racer.pl'], User: '10001:10001', WorkingDir: '/workspace' });
    await exec.start({ Detach: true });
    let racer = '';
    for (let i = 0; i < 100 && racer === ''; i++) {
      await new Promise((res) => setTimeout(res, 100));
      racer = (
        await rootExec(driver, sandbox, [
          'sh',
          '-c',
          'p=$(cat /tmp/racer.pid 2>/dev/null) && [ -d /proc/$p ] && echo $p',
        ])
      ).output.trim();
    }
    expect(racer, 'the stand-in racer did not start').not.toBe('');

    for (let k = 1; k <= ATTEMPTS; k++) {
      await run(
        sandbox,
        'write_file',
        { path: `w/d${k}/${DEEP}f`, content: 'planted by write_file\n' },
        { timeoutMs: 30_000 },
      );
    }
    const state = await rootExec(driver, sandbox, [
      'sh',
      '-c',
      // The racer's log is absent when it swapped nothing; its error would come first in the merged output.
      'stat -c "%u:%g %a" /var/gatehouse; ls -A /var/gatehouse; cat /tmp/racer.log 2>/dev/null; true',
    ]);
    const [owner, ...rest] = state.output.trim().split('\n');
    expect(owner, state.output).toBe('0:0 700');
    expect(
      rest.filter((l) => l === 'a'),
      state.output,
    ).toEqual([]);
    // And so a command can read and change the daemon's baseline, protect list and key file.
    const look = await run(sandbox, 'exec', { command: 'ls -A /var/gatehouse' });
    expect(look.status, look.output).toBe('failed');
  });
});
