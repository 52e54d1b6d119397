import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../bin/gatehouse.mjs', import.meta.url));

/**
 * An error message can quote what a repository, a model or a server wrote (here a policy rule): the
 * CLI shows control characters as escapes, so they cannot recolour the terminal, move the cursor or
 * set the clipboard (OSC 52).
 */
describe('errors printed by the CLI', () => {
  it('show control characters from a policy file as escapes, never raw', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-escape-'));
    const policy = path.join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ allow: ['ba\u001b[31msh(x)', 'x\u001b]52;c;aGk=\u0007(y)'] }));
    const r = spawnSync(
      process.execPath,
      [cli, 'policy', 'check', '--policy', policy, '--tool', 'bash', '--input', '{"command":"ls"}'],
      { encoding: 'utf8', input: '', timeout: 60_000, env: { ...process.env, CI: 'true' } },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('ba\\u{1b}[31msh(x)');
    expect(r.stderr).toContain('x\\u{1b}]52;c;aGk=\\u{7}(y)');
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });
});
