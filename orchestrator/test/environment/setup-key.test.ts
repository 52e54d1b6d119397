import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockfileHashes } from '../../src/environment/lockfiles';
import { setupCacheImage, setupCacheKey, type SetupKeyInputs } from '../../src/environment/setup-key';

const base: SetupKeyInputs = {
  runImageId: 'sha256:aaa',
  commands: ['npm ci'],
  egress: ['registry.npmjs.example.com'],
  secretNames: ['NPM_TOKEN'],
  lockfiles: { 'package-lock.json': 'h1' },
  readScope: '{"exclude":[],"include":[],"policy":null}',
  repository: '/home/u/project',
};

describe('setupCacheKey', () => {
  it('is stable for the same inputs, whatever the order of sets', () => {
    const a = setupCacheKey(base);
    const b = setupCacheKey({ ...base, egress: [...base.egress], lockfiles: { ...base.lockfiles } });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    const twoHosts = setupCacheKey({ ...base, egress: ['a.example', 'b.example'] });
    expect(setupCacheKey({ ...base, egress: ['b.example', 'a.example'] })).toBe(twoHosts);
  });
  it.each<[string, Partial<SetupKeyInputs>]>([
    ['image', { runImageId: 'sha256:bbb' }],
    ['commands', { commands: ['npm install'] }],
    ['command order', { commands: ['a', 'b'] }],
    ['allowlist', { egress: [] }],
    ['secret names', { secretNames: [] }],
    ['a lockfile', { lockfiles: { 'package-lock.json': 'h2' } }],
    ['a new lockfile', { lockfiles: { 'package-lock.json': 'h1', 'sub/yarn.lock': 'h3' } }],
    // Red team: a result built where .env was readable must not serve a run whose policy withholds it.
    ['policy that withholds paths', { readScope: '{"exclude":[],"include":[],"policy":"sha-of-policy"}' }],
    // Red team: a fork with the same lockfiles but a hostile install script must not poison another repository's cache.
    ['repository', { repository: '/home/u/fork-of-project' }],
    ['copy globs', { readScope: '{"exclude":[],"include":[".env"],"policy":null}' }],
  ])('changes when the %s changes', (_what, change) => {
    expect(setupCacheKey({ ...base, ...change })).not.toBe(setupCacheKey(base));
  });
  it('orders commands', () => {
    expect(setupCacheKey({ ...base, commands: ['a', 'b'] })).not.toBe(setupCacheKey({ ...base, commands: ['b', 'a'] }));
  });
  it('names a cache image by the key', () => {
    expect(setupCacheImage('ab'.repeat(32))).toBe(`gatehouse/setup-cache:${'ab'.repeat(12)}`);
  });
});

describe('lockfileHashes', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const repo = (): string => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'gh-lock-'));
    dirs.push(d);
    return d;
  };

  it('hashes lockfiles at any depth but not inside installed dependencies or .git', async () => {
    const d = repo();
    writeFileSync(path.join(d, 'package-lock.json'), '{"lockfileVersion":3}');
    writeFileSync(path.join(d, 'index.js'), 'x');
    mkdirSync(path.join(d, 'packages', 'a'), { recursive: true });
    writeFileSync(path.join(d, 'packages', 'a', 'package.json'), '{}');
    mkdirSync(path.join(d, 'node_modules', 'dep'), { recursive: true });
    writeFileSync(path.join(d, 'node_modules', 'dep', 'package.json'), '{}');
    mkdirSync(path.join(d, '.git'));
    writeFileSync(path.join(d, '.git', 'package.json'), '{}');
    const h = await lockfileHashes(d);
    expect(Object.keys(h).sort()).toEqual(['package-lock.json', 'packages/a/package.json']);
    writeFileSync(path.join(d, 'package-lock.json'), '{"lockfileVersion":2}');
    const h2 = await lockfileHashes(d);
    expect(h2['package-lock.json']).not.toBe(h['package-lock.json']);
    expect(h2['packages/a/package.json']).toBe(h['packages/a/package.json']);
  });

  it('hashes a symlinked lockfile by where it points, never reading outside', async () => {
    const d = repo();
    symlinkSync('/etc/hostname', path.join(d, 'yarn.lock'));
    const h = await lockfileHashes(d);
    expect(Object.keys(h)).toEqual(['yarn.lock']);
    symlinkSync('/etc/hosts', path.join(d, 'poetry.lock'));
    expect((await lockfileHashes(d))['poetry.lock']).not.toBe(h['yarn.lock']);
  });
});
