import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A Docker engine that died without cleaning up leaves its containers' veths plugged into its
 * bridges while the kernel lives on. When the next engine gives a container the same address, the
 * bridge still delivers that MAC to the dead port: the container listens and every connection is
 * refused (what made NATS unreachable after a restart here). setup deletes such ports before it
 * starts dockerd (scripts/lib.sh _gatehouse_drop_stale_bridge_ports); this builds one for real — a
 * bridge, a veth whose far end lives in a namespace nothing uses — and has setup's function remove it.
 */
const LIB = path.resolve(__dirname, '..', '..', 'scripts', 'lib.sh');
const tag = randomBytes(3).toString('hex');
const bridge = `ghbr${tag}`;
const stale = `ghst${tag}`;
const live = `ghlv${tag}`;
const netns = `ghns${tag}`;

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function exists(link: string): boolean {
  return ip('-o', 'link', 'show').includes(` ${link}@`) || ip('-o', 'link', 'show').includes(` ${link}:`);
}

afterAll(() => {
  for (const args of [
    ['link', 'del', stale],
    ['link', 'del', live],
    ['link', 'del', bridge],
    ['netns', 'del', netns],
  ])
    try {
      ip(...args);
    } catch {
      // already gone
    }
});

describe('setup: ports left on Docker bridges by a dead engine', () => {
  it('deletes the veths on the bridges it is given, and leaves other links alone', () => {
    expect(process.getuid?.(), 'setup runs as root; so must this test').toBe(0);
    ip('link', 'add', bridge, 'type', 'bridge');
    ip('netns', 'add', netns);
    ip('link', 'add', stale, 'type', 'veth', 'peer', 'name', `${stale}p`);
    ip('link', 'set', `${stale}p`, 'netns', netns);
    ip('link', 'set', stale, 'master', bridge);
    // A veth not on the bridge: not the function's to touch.
    ip('link', 'add', live, 'type', 'veth', 'peer', 'name', `${live}p`);
    expect(ip('-o', 'link', 'show', 'master', bridge)).toContain(stale);

    const r = spawnSync(
      'bash',
      ['-c', 'set -euo pipefail; source "$1"; _gatehouse_drop_stale_bridge_ports "$2"', 'lib', LIB, bridge],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`removing ${stale}: left plugged into ${bridge}`);

    expect(exists(stale)).toBe(false);
    expect(execFileSync('ip', ['-n', netns, '-o', 'link', 'show'], { encoding: 'utf8' })).not.toContain(`${stale}p`);
    expect(exists(bridge)).toBe(true);
    expect(exists(live)).toBe(true);
  });
});
