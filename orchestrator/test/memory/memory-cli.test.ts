import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@gatehouse/shared';
import { LogKey } from '../../src/events/key';
import type { MemoryRecord } from '../../src/memory/memory-record';
import { MemoryStore } from '../../src/memory/memory-store';
import { repositoryIdentity } from '../../src/memory/repository-identity';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const cli = path.join(root, 'orchestrator', 'bin', 'gatehouse.mjs');
const DAY = 86_400_000;

/** A state directory and a key of its own (outside it), with records written as a run would. */
function installation() {
  const state = mkdtempSync(path.join(os.tmpdir(), 'gh-memcli-state-'));
  const keyFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-memcli-key-')), 'log.key');
  const env = { GATEHOUSE_STATE_DIR: state, GATEHOUSE_KEY_FILE: keyFile, GATEHOUSE_HEADS_DIR: '' };
  const store = new MemoryStore(path.join(state, 'memory'), LogKey.load({ env }));
  const gatehouse = (...args: string[]) =>
    spawnSync(process.execPath, [cli, 'memory', ...args], {
      encoding: 'utf8',
      timeout: 30_000,
      cwd: state,
      env: { ...process.env, ...env },
    });
  return { state, store, gatehouse };
}

function record(over: Partial<MemoryRecord> = {}): MemoryRecord {
  const now = Date.now();
  return {
    id: newId('mem'),
    text: 'The user wants commits signed off.',
    scope: 'user',
    repository: null,
    source: {
      runId: 'run_src',
      observationIds: ['obs-1'],
      citations: [{ observationId: 'obs-1', quote: 'Signed-off-by: required' }],
    },
    confidence: 'medium',
    createdAt: new Date(now - 10 * DAY).toISOString(),
    expiresAt: new Date(now + 30 * DAY).toISOString(),
    verified: true,
    approvedBy: 'user:test via terminal',
    ...over,
  };
}

describe('gatehouse memory list|show|forget|expire', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'pipe' });
  });

  it('lists, shows with provenance, forgets; says clearly what is missing', () => {
    const { store, gatehouse } = installation();
    const r = record();
    store.put(r);
    const list = gatehouse('list');
    expect(list.status).toBe(0);
    expect(list.stdout).toContain(`${r.id}  user`);
    const show = gatehouse('show', r.id);
    expect(show.status).toBe(0);
    expect(show.stdout).toContain('from run run_src, approved by user:test via terminal; verified: true');
    expect(show.stdout).toContain('obs-1: "Signed-off-by: required"');
    expect(gatehouse('forget', r.id).stdout).toBe(`forgot ${r.id}\n`);
    const again = gatehouse('show', r.id);
    expect(again.status).toBe(2);
    expect(again.stderr).toBe(`gatehouse: no memory record ${r.id}: see gatehouse memory list --all\n`);
    expect(gatehouse('forget', r.id).status).toBe(2);
  });

  it('a tampered record is reported and list and show exit 1; forget removes it', () => {
    const { store, gatehouse } = installation();
    const r = record();
    store.put(r);
    const file = path.join(store.dir, `${r.id}.json`);
    writeFileSync(file, readFileSync(file, 'utf8').replace('signed off', 'pushed to main'));
    const list = gatehouse('list');
    expect(list.status).toBe(1);
    expect(list.stdout).not.toContain(r.id);
    expect(list.stderr).toContain(`memory record ${r.id}.json refused (never used): its MAC does not match`);
    expect(gatehouse('show', r.id).status).toBe(1);
    expect(gatehouse('forget', r.id).status).toBe(0);
    expect(gatehouse('list').status).toBe(0);
  });

  it('expire removes expired records, and with --older-than those older; a bad age is a usage error', () => {
    const { store, gatehouse } = installation();
    const fresh = record({ createdAt: new Date(Date.now() - DAY).toISOString() });
    const old = record();
    const expired = record({ expiresAt: new Date(Date.now() - 1000).toISOString() });
    for (const r of [fresh, old, expired]) store.put(r);
    expect(gatehouse('expire').stdout).toBe(`removed 1 record(s): ${expired.id}\n`);
    const dry = gatehouse('expire', '--older-than', '7d', '--dry-run', '--json');
    expect(JSON.parse(dry.stdout)).toEqual({ wouldRemove: [old.id], refused: [] });
    expect(gatehouse('expire', '--older-than', '7d').stdout).toBe(`removed 1 record(s): ${old.id}\n`);
    expect(store.read().records.map((r) => r.id)).toEqual([fresh.id]);
    const bad = gatehouse('expire', '--older-than', 'soon');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--older-than "soon" is not an age');
  });

  it("list shows this repository's records and the user's, --all every one, --json the same; show --json", async () => {
    const { store, gatehouse } = installation();
    const repo = (name: string) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), `gh-memcli-${name}-`));
      const git = (...a: string[]) => execFileSync('git', a, { cwd: dir, stdio: 'pipe' });
      git('init', '-q');
      writeFileSync(path.join(dir, 'README.md'), `# ${name}\n`);
      git('add', '.');
      git('-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-qm', name);
      git('remote', 'add', 'origin', `git@example.invalid:o/${name}.git`);
      return dir;
    };
    const [a, b] = [repo('a'), repo('b')];
    const [idA, idB] = [(await repositoryIdentity(a)).id, (await repositoryIdentity(b)).id];
    expect(idA).not.toBe(idB);
    const ofA = record({ scope: 'repository', repository: idA, text: 'A is tested with node --test.' });
    const ofB = record({ scope: 'repository', repository: idB, text: 'B is tested with vitest.' });
    const user = record();
    for (const r of [ofA, ofB, user]) store.put(r);
    const ids = (out: string) =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ')[0])
        .sort();

    const listA = gatehouse('list', '--repo', a);
    expect(listA.status).toBe(0);
    expect(ids(listA.stdout)).toEqual([ofA.id, user.id].sort());
    expect(ids(gatehouse('list', '--repo', b).stdout)).toEqual([ofB.id, user.id].sort());
    expect(ids(gatehouse('list', '--repo', a, '--all').stdout)).toEqual([ofA.id, ofB.id, user.id].sort());
    const json = JSON.parse(gatehouse('list', '--repo', b, '--json').stdout) as {
      repository: string;
      records: MemoryRecord[];
      refused: unknown[];
    };
    expect(json.repository).toBe(idB);
    expect(json.records.map((r) => r.id).sort()).toEqual([ofB.id, user.id].sort());
    expect(json.refused).toEqual([]);
    // A plain folder is another repository: only the user's record.
    const plain = mkdtempSync(path.join(os.tmpdir(), 'gh-memcli-plain-'));
    expect(ids(gatehouse('list', '--repo', plain).stdout)).toEqual([user.id]);

    const show = gatehouse('show', ofA.id, '--json');
    expect(show.status).toBe(0);
    expect(JSON.parse(show.stdout)).toEqual(ofA);
  });
});
