import { afterAll, describe, expect, it } from 'vitest';
import { docker } from '@gatehouse/orchestrator';
import { cleanScratch, dataOf, gitRepo, runCli, script, scratch } from '../support/setup-phase';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Red team (issue 12): `--setup-env NAME` declares NAME's value a secret, whatever NAME is. The
 * log's redactor only knew variables named like credentials (…TOKEN, …KEY, …PASSWORD), so a
 * private index URL with its password (PIP_INDEX_URL) or a registry login under another name went
 * into the log as setup printed it.
 */
const images = new Set<string>();
afterAll(async () => {
  for (const image of images)
    await docker()
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
  cleanScratch();
});

describe('setup secrets under any name (red team)', () => {
  it('are redacted from the log and the output, however the variable is named', () => {
    const values = {
      PIP_INDEX_URL: 'https://ci:hunter2-index-pass@pypi.internal.example/simple',
      REGISTRY_PASS: 'rt12-registry-pass-9f8e',
    };
    const repo = gitRepo({ 'README.md': '# r\n' });
    const cfg = path.join(scratch(), 'config.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        policy: { allow: ['bash'] },
        setup: [`echo "index $PIP_INDEX_URL pass $REGISTRY_PASS ${Date.now()}"`],
      }),
    );
    const model = script(['echo agent'], 'done (obs-1)');
    const r = runCli(
      [
        ...['--model', `scripted:${model}`, '--repo', repo, '--config', cfg],
        ...['--setup-env', 'PIP_INDEX_URL', '--setup-env', 'REGISTRY_PASS'],
      ],
      values,
      300_000,
    );
    for (const c of dataOf<{ image: string }>(r.events, 'setup.completed')) images.add(c.image);
    expect(r.status, r.stderr).toBe(0);
    const output = dataOf<{ output: string }>(r.events, 'setup.command')[0]!.output;
    expect(output).toMatch(/^index \[REDACTED:PIP_INDEX_URL\] pass \[REDACTED:REGISTRY_PASS\]/);
    for (const v of Object.values(values)) {
      expect(JSON.stringify(r.events)).not.toContain(v);
      expect(r.stdout + r.stderr).not.toContain(v);
    }
  }, 300_000);
});
