import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '@gatehouse/shared';

/**
 * `gatehouse verify` against a forger who can write the state directory but not the installation's
 * key: a real run through the CLI (real sandbox, scripted model), then three tamperings that a plain
 * hash chain cannot see. Each must make verify exit 1 and say what it found.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'orchestrator/bin/gatehouse.mjs');
const example = path.join(root, 'examples/failing-test');

// This installation's key (and the heads beside it) live in a directory of their own, as in real use.
const keyDir = mkdtempSync(path.join(os.tmpdir(), 'gh-key-'));
const env = { ...process.env, GATEHOUSE_KEY_FILE: path.join(keyDir, 'log.key'), CI: 'true' };

function gatehouse(args: string[]) {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 120_000, env, input: '' });
}

type Line = Record<string, unknown>;

/**
 * The forger's own sealing: SHA-256 of the canonical event without `hash` (and without any keyed field it cannot
 * compute).
 */
function reseal(lines: string[], edit: (e: Line, i: number) => void): string[] {
  let prevHash = '0'.repeat(64);
  return lines.map((l, i) => {
    const { hash: _h, mac: _m, ...e } = JSON.parse(l) as Line;
    const kept = (JSON.parse(l) as Line).mac;
    edit(e, i);
    e.prevHash = prevHash;
    const hash = sha256Hex(canonicalJson(e));
    prevHash = hash;
    return canonicalJson({ ...e, hash, ...(kept !== undefined ? { mac: kept } : {}) });
  });
}

describe('gatehouse verify detects what a hash chain alone cannot', () => {
  let stateDir: string;
  let runId: string;
  const copy = (): { dir: string; file: string; lines: string[] } => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-tampered-'));
    cpSync(stateDir, dir, { recursive: true });
    const file = path.join(dir, 'runs', runId, 'events.jsonl');
    return { dir, file, lines: readFileSync(file, 'utf8').trimEnd().split('\n') };
  };

  beforeAll(() => {
    const repo = mkdtempSync(path.join(os.tmpdir(), 'gh-demo-'));
    cpSync(example, repo, { recursive: true });
    const script = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-script-')), 'script.json');
    // 30k numbers: far over the observation budget, so the full output is stored as an artifact.
    writeFileSync(
      script,
      JSON.stringify({
        turns: [
          { toolCalls: [{ name: 'bash', input: { command: 'seq 1 30000' } }] },
          { final: 'Printed the numbers (obs-1).' },
        ],
      }),
    );
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'gh-runs-'));
    const r = gatehouse([
      'run',
      'print numbers',
      '--repo',
      repo,
      '--model',
      `scripted:${script}`,
      '--mode',
      'sandboxed-auto',
      '--state-dir',
      stateDir,
    ]);
    expect(r.status, r.stderr).not.toBe(2);
    runId = readdirSync(path.join(stateDir, 'runs'))[0]!;
    const ok = gatehouse(['verify', runId, '--state-dir', stateDir]);
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(
      readdirSync(path.join(stateDir, 'runs', runId, 'artifacts')).filter((f) => f.startsWith('art-')),
    ).toHaveLength(1);
  }, 180_000);

  it('a cut tail, run.completed included', () => {
    const t = copy();
    writeFileSync(t.file, `${t.lines.slice(0, -3).join('\n')}\n`);
    const r = gatehouse(['verify', runId, '--state-dir', t.dir]);
    expect(r.status, r.stdout).toBe(1);
    expect(r.stdout).toMatch(/cut tail/i);
  });

  it('an edited event with every later hash recomputed', () => {
    const t = copy();
    const at = t.lines.findIndex((l) => l.includes('"seq 1 30000"'));
    expect(at).toBeGreaterThan(0);
    const forged = reseal(t.lines, (e, i) => {
      if (i === at) e.data = JSON.parse(JSON.stringify(e.data).replaceAll('seq 1 30000', 'seq 1 3')) as unknown;
    });
    writeFileSync(t.file, `${forged.join('\n')}\n`);
    const r = gatehouse(['verify', runId, '--state-dir', t.dir]);
    expect(r.status, r.stdout).toBe(1);
    expect(r.stdout).toContain(`seq ${at}`);
  });

  it('an overwritten artifact', () => {
    const t = copy();
    const dir = path.join(t.dir, 'runs', runId, 'artifacts');
    const art = readdirSync(dir).find((f) => f.startsWith('art-'))!;
    writeFileSync(path.join(dir, art), 'all tests passed\n');
    const r = gatehouse(['verify', runId, '--state-dir', t.dir]);
    expect(r.status, r.stdout).toBe(1);
    expect(r.stdout).toContain(art);
  });
});
