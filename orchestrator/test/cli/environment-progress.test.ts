import { describe, expect, it } from 'vitest';
import type { EventEnvelope } from '@gatehouse/shared';
import { environmentLines } from '../../src/cli/environment-progress';

const event = (type: string, data: object): EventEnvelope => ({ type, data }) as unknown as EventEnvelope;

describe('environmentLines: the live trace of the environment', () => {
  it.each<[string, object, RegExp[]]>([
    [
      'setup.started',
      {
        image: 'preset:node',
        runImage: 'r',
        commands: ['npm ci'],
        cacheKey: 'k',
        egress: ['registry.npmjs.example.com'],
        secrets: [],
      },
      [/setup in preset:node: 1 command\(s\); setup may reach registry\.npmjs\.example\.com/],
    ],
    [
      'setup.command',
      {
        index: 0,
        command: 'npm ci',
        status: 'ok',
        exitCode: 0,
        durationMs: 2500,
        output: '',
        bytes: 0,
        truncated: false,
      },
      [/✓ setup: npm ci {2}\(exit 0, 2\.5 s\)/],
    ],
    [
      'setup.command',
      {
        index: 0,
        command: 'npm ci',
        status: 'ok',
        exitCode: 1,
        durationMs: 20,
        output: '',
        bytes: 0,
        truncated: false,
      },
      [/✗ setup: npm ci {2}\(exit 1, 20 ms\)/],
    ],
    [
      'setup.completed',
      { cacheHit: true, cacheKey: 'k', image: 'gatehouse/setup-cache:abc', durationMs: 3 },
      [/cache hit/],
    ],
    [
      'setup.failed',
      { stage: 'command', reason: 'setup command 1 (npm ci) failed (exit 1):\nnpm ERR! 404\n\u001b[31mred' },
      [/✗ setup: setup command 1/, /│ npm ERR! 404/, /│ (?!.*\u001b)/],
    ],
    [
      'setup.failed',
      { stage: 'preflight', reason: 'not found in the sandbox image x: npm (needed by check)' },
      [/✗ preflight:/],
    ],
    [
      'egress.denied',
      { host: 'evil.example', port: 443, phase: 'setup', reason: 'not on the allowlist' },
      [/egress \(setup\) evil\.example:443 denied/],
    ],
  ])('%s', (type, data, expected) => {
    const lines = environmentLines(event(type, data)) ?? [];
    expect(lines.length).toBe(expected.length);
    expected.forEach((re, i) => expect(lines[i]).toMatch(re));
    for (const l of lines) expect(l).not.toContain('\u001b');
  });

  it('says nothing of other events, and prints copy-in notices', () => {
    expect(environmentLines(event('model.request', {}))).toBeUndefined();
    expect(environmentLines(event('sandbox.started', { notices: ['node_modules -> ../x points outside'] }))).toEqual([
      '  note: node_modules -> ../x points outside',
    ]);
  });
});
