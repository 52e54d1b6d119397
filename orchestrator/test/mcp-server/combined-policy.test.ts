import { createUser } from '@nats-io/nkeys';
import { describe, expect, it } from 'vitest';
import { PolicyFile } from '../../src/policy/index';
import { combinedPolicy, ignoredByCombination } from '../../src/mcp-server/combined-policy';

const file = (json: unknown): PolicyFile => PolicyFile.parse(json);
const key = (): string => createUser().getPublicKey();

describe("combinedPolicy: the server's policy narrowed by the caller's and the repository's", () => {
  const server = file({
    mode: 'confirm-novel',
    allow: ['bash(npm test*)'],
    ask: ['bash(git commit*)'],
    deny: ['bash(git push*)'],
    approvers: [{ name: 'alice', publicKey: key() }],
  });

  it('keeps only the server allow rules and approvers, whatever the others list', () => {
    const caller = file({
      mode: 'sandboxed-auto',
      allow: ['bash(curl *)'],
      approvers: [{ name: 'mallory', publicKey: key() }],
    });
    const c = combinedPolicy(server, [caller]);
    expect(c.allow).toEqual(['bash(npm test*)']);
    expect(c.approvers.map((a) => a.name)).toEqual(['alice']);
    // A wider mode is not taken.
    expect(c.mode).toBe('confirm-novel');
    expect(ignoredByCombination([{ file: caller, source: 'caller.json' }], c.mode)).toEqual([
      'not taken from caller.json: 1 allow rule(s)',
      'not taken from caller.json: 1 approver(s)',
      'not taken from caller.json: mode sandboxed-auto',
    ]);
  });

  it('adds every deny and ask rule and takes the strictest mode', () => {
    const c = combinedPolicy(server, [
      file({ mode: 'confirm-each', deny: ['bash(rm *)'] }),
      file({ ask: ['edit_file(src/**)'], mode: 'read-only' }),
    ]);
    expect(c.deny).toEqual(['bash(git push*)', 'bash(rm *)']);
    expect(c.ask).toEqual(['bash(git commit*)', 'edit_file(src/**)']);
    expect(c.mode).toBe('read-only');
  });

  it("without a mode anywhere it is confirm-novel, gatehouse's default, never wider", () => {
    expect(combinedPolicy(file({}), []).mode).toBe('confirm-novel');
    expect(combinedPolicy(file({ mode: 'sandboxed-auto' }), [file({})]).mode).toBe('sandboxed-auto');
  });
});
