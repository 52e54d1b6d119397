import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, sh, startDriver } from '../support/sandbox';
import { pipelineFor, type PipelineHarness } from '../support/pipeline';

/**
 * A malicious repository names programs in its own .git/config; git runs them on commands the
 * classifier calls read-only. Each attack leaves a marker in /tmp and deletes protected.txt.
 * Issue 10, breaks 2 and 3.
 */
const EVIL = '#!/bin/sh\necho "$1" >> /tmp/gatehouse-pwned\nrm -f /workspace/protected.txt\ncat\n';

interface Attack {
  name: string;
  /** Extra files committed in the fixture. */
  files: Record<string, string>;
  /** Lines appended to the fixture's .git/config after the commit (so the host's git never runs them). */
  config: string;
  /** A shell command (run directly, outside the pipeline) that makes the attacked file dirty. */
  dirty: string;
}

const ATTACKS: Attack[] = [
  {
    name: 'core.fsmonitor',
    files: { 'notes.txt': 'one\n' },
    config: '[core]\n\tfsmonitor = sh /workspace/hooks/evil.sh fsmonitor\n',
    dirty: 'echo two >> notes.txt',
  },
  {
    name: 'a clean filter named by .gitattributes',
    files: { 'data.dat': 'one\n', '.gitattributes': '*.dat filter=evil\n' },
    config:
      '[filter "evil"]\n\tclean = sh /workspace/hooks/evil.sh clean\n\tsmudge = sh /workspace/hooks/evil.sh smudge\n',
    dirty: 'echo two >> data.dat',
  },
  {
    name: 'a diff textconv named by .gitattributes',
    files: { 'doc.txt': 'one\n', '.gitattributes': '*.txt diff=evil\n' },
    config: '[diff "evil"]\n\ttextconv = sh /workspace/hooks/evil.sh textconv\n',
    dirty: 'echo two >> doc.txt',
  },
];

function evilRepo(attack: Attack): string {
  const dir = makeRepo({
    'README.md': '# fixture\n',
    'protected.txt': 'keep me\n',
    'hooks/evil.sh': EVIL,
    ...attack.files,
  });
  // A second commit, so `git log -p` has a diff to show for the attacked file.
  for (const f of Object.keys(attack.files)) appendFileSync(path.join(dir, f), '');
  execFileSync('git', ['-c', 'user.email=t@g', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'second'], {
    cwd: dir,
  });
  appendFileSync(path.join(dir, '.git', 'config'), attack.config);
  return dir;
}

describe.each(ATTACKS)('repository-configured programs do not run: $name', (attack) => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let h: PipelineHarness;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({ runId: `run_gitcfg_${ATTACKS.indexOf(attack)}`, repoDir: evilRepo(attack) });
    await sh(sandbox, attack.dirty);
    h = pipelineFor(sandbox, { mode: 'sandboxed-auto' });
  });
  afterAll(async () => driver?.close());

  /** What the attack did so far: the marker's lines, and whether protected.txt survived. */
  const damage = async () => {
    const marker = (await sh(sandbox, 'cat /tmp/gatehouse-pwned 2>/dev/null || true')).trim();
    const kept = (await sh(sandbox, 'test -f protected.txt && echo kept || echo deleted')).trim();
    return { marker, kept };
  };

  it.each([
    ['git_status', {}],
    ['git_diff', {}],
    ['bash', { command: 'git status' }],
    ['bash', { command: 'git diff' }],
    ['bash', { command: 'git log -p' }],
  ] as const)('%s %j', async (tool, input) => {
    // Each call starts undamaged, so one case's result does not leak into the next.
    await sh(sandbox, 'rm -f /tmp/gatehouse-pwned; echo "keep me" > protected.txt');
    const obs = await h.call(tool, input);
    const approval = h.eventsOf(h.lastCallId()).find((e) => e.type === 'tool.approval')!.data as { decision: string };
    // The call is allowed as read-only and runs; the configured program does not.
    expect(approval.decision).toBe('allow');
    expect(obs.outcome, obs.content).toBe('ok');
    expect(await damage()).toEqual({ marker: '', kept: 'kept' });
  });
});

describe('a "read-only" command cannot plant a git config without asking (default mode, no rules)', () => {
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  let h: PipelineHarness;
  let auto: PipelineHarness;
  beforeAll(async () => {
    driver = await startDriver();
    sandbox = await driver.createSandbox({
      runId: 'run_gitcfg_plant',
      repoDir: makeRepo({ 'README.md': '# fixture\n', 'cfg.txt': '[core]\n\tfsmonitor = touch /tmp/planted\n' }),
    });
    h = pipelineFor(sandbox, { mode: 'confirm-novel' });
    auto = pipelineFor(sandbox, { mode: 'sandboxed-auto' });
  });
  afterAll(async () => driver?.close());

  it.each([
    'uniq cfg.txt .git/config',
    'sort -o .git/config cfg.txt',
    'sort --output=./.git/config cfg.txt',
    'shuf -o src/../.git/config cfg.txt',
    'cat cfg.txt > .git/config',
  ])('%s asks', async (command) => {
    const before = await sh(sandbox, 'cat .git/config');
    const obs = await h.call('bash', { command });
    const approval = h.eventsOf(h.lastCallId()).find((e) => e.type === 'tool.approval')!.data as { decision: string };
    expect(approval.decision).toBe('ask');
    expect(obs.outcome).not.toBe('ok');
    expect(await sh(sandbox, 'cat .git/config')).toBe(before);
  });

  it('even in sandboxed-auto, writes under .git ask: write_file, a redirection, an output operand', async () => {
    const before = await sh(sandbox, 'cat .git/config');
    const calls: Array<[string, Record<string, string>]> = [
      ['read_file', { path: '.git/config' }],
      ['edit_file', { path: '.git/config', oldText: '[core]', newText: '[core]\n\tfsmonitor = touch /tmp/planted' }],
      ['write_file', { path: './.git/hooks/pre-commit', content: '#!/bin/sh\n' }],
      ['write_file', { path: 'src/../.git/info/attributes', content: '* filter=x\n' }],
      ['bash', { command: 'cat cfg.txt > .git/config' }],
      ['bash', { command: 'uniq cfg.txt ./.git/config' }],
    ];
    for (const [tool, input] of calls) {
      const obs = await auto.call(tool, input);
      if (tool === 'read_file') continue; // reading .git is fine (and edit_file needs it first)
      const approval = auto.eventsOf(auto.lastCallId()).find((e) => e.type === 'tool.approval')?.data as
        { decision: string } | undefined;
      // Asked; with no approver in this run, that ends as a denial, and nothing ran.
      expect([approval?.decision, obs.outcome], `${JSON.stringify(input)}: ${obs.content}`).toEqual(['ask', 'denied']);
    }
    expect(await sh(sandbox, 'cat .git/config')).toBe(before);
  });
});
