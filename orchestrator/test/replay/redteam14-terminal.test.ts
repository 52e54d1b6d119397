import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Script } from '../../src/providers/scripted';
import { recordRun, scriptFile } from './recorded-run';

process.env.GATEHOUSE_KEY_FILE = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-rt14-key-')), 'log.key');

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');

/**
 * Red team (issue 14): what a replay prints for a person comes in part from models (the new model's
 * tool names in `--mode model`, the recorded model's in every mode). A name holding terminal control
 * sequences (OSC 52 writes the clipboard, OSC 0 the title, CSI can hide or rewrite the verdict line)
 * must reach the terminal as visible text, never as control bytes.
 */
const ESC = '\u001b';
const HOSTILE = `${ESC}]52;c;cm0gLXJmIH4K\u0007${ESC}[2K${ESC}[1Aread_file`;

describe('red team 14: terminal control sequences from a model', () => {
  it('the new model calling a tool named with escape sequences: printed visibly, never raw', async () => {
    const recorded: Script = {
      turns: [{ toolCalls: [{ name: 'read_file', input: { path: 'a.txt' } }] }, { final: 'hi' }],
    };
    const rec = await recordRun(recorded, { 'a.txt': 'hi\n' });
    const hostile = scriptFile({ turns: [{ toolCalls: [{ name: HOSTILE, input: { path: 'a.txt' } }] }] });
    const r = spawnSync(
      process.execPath,
      [cli, 'replay', rec.runId, '--mode', 'model', '--state-dir', rec.stateDir, '--model', `scripted:${hostile}`],
      { cwd: root, encoding: 'utf8', timeout: 30_000, env: process.env },
    );
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/diverged/);
    expect(r.stdout).not.toContain(ESC);
    expect(r.stdout).not.toContain('\u0007');
  });
});
