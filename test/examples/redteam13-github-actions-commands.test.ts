import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runner, step } from '../support/github-actions';

/**
 * Red team (issue 13): workflow commands smuggled into the job log. gatehouse prints the model's
 * answer and commands' output, which the pull request can steer; a line of it that starts with `::`
 * is read by the runner as a command (a forged `::error::`, `::add-mask::`, `::set-output`). A
 * stand-in for gatehouse prints such lines on both streams; the log must carry them only while the
 * runner has been told to stop reading commands.
 */
const FORGED = ['::error title=gatehouse::all checks passed', '::set-output name=status::final', '::add-mask::run_'];

function fakeGatehouse(dir: string): string {
  const bin = path.join(dir, 'fake-gatehouse');
  const lines = FORGED.map((l) => `echo '${l}'`).join('\n');
  writeFileSync(
    bin,
    `#!/bin/sh\ncase "$1" in\n  runs) echo '[]' ;;\n  *) echo 'answer: done'\n${lines}\n` +
      `     echo '::warning::from stderr' >&2\n     exit 4 ;;\nesac\n`,
    { mode: 0o755 },
  );
  return bin;
}

/** The commands the runner would act on: GitHub's `::stop-commands::TOKEN` … `::TOKEN::` rule. */
function commandsActedOn(log: string): string[] {
  const acted: string[] = [];
  let stopped: string | undefined;
  for (const line of log.split('\n')) {
    if (stopped !== undefined) {
      if (line === `::${stopped}::`) stopped = undefined;
      continue;
    }
    const stop = /^::stop-commands::(.+)$/.exec(line);
    if (stop) stopped = stop[1];
    else if (line.startsWith('::')) acted.push(line);
  }
  return acted;
}

describe('red team: gatehouse output cannot issue workflow commands', () => {
  it('lines gatehouse prints are read while commands are stopped, with an unguessable token', async () => {
    const r = runner({ GITHUB_EVENT_NAME: 'issue_comment' });
    const res = await step(r, 'run.mjs', {}, {
      GATEHOUSE_BIN: fakeGatehouse(r.temp),
      GATEHOUSE_TASK_TEXT: 'do it',
      GATEHOUSE_REPO: r.workspace,
      GATEHOUSE_MODEL: 'openai:gpt-test',
    });
    expect(res.status, res.stderr).toBe(4);
    for (const l of FORGED) expect(res.stdout).toContain(l);
    expect(res.stdout).toContain('::warning::from stderr');
    expect(commandsActedOn(res.stdout)).toEqual([]);
    const tokens = [...res.stdout.matchAll(/^::stop-commands::(.+)$/gm)].map((m) => m[1]);
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const t of tokens) expect(t).toMatch(/^gatehouse-[0-9a-f]{32}$/);
  });
});
