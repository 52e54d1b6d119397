import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** An `ssh-agent` of the test's own (foreground, its socket in a fresh folder) holding the keys given. */
export interface SshAgent {
  sock: string;
  stop(): Promise<void>;
}

export async function startSshAgent(keys: string[]): Promise<SshAgent> {
  const sock = path.join(mkdtempSync(path.join(os.tmpdir(), 'gh-ssh-agent-')), 'agent.sock');
  const agent: ChildProcess = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => agent.on('close', () => resolve()));
  const stop = async (): Promise<void> => {
    agent.kill('SIGTERM');
    await exited;
  };
  for (let i = 0; i < 100 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(sock)) {
    await stop();
    throw new Error(`ssh-agent made no socket at ${sock} within 5 s`);
  }
  for (const key of keys) {
    const r = spawnSync('ssh-add', ['-q', key], {
      env: { ...process.env, SSH_AUTH_SOCK: sock },
      encoding: 'utf8',
      timeout: 10_000,
    });
    if (r.status !== 0) {
      await stop();
      throw new Error(`ssh-add ${key} failed: ${r.stderr}`);
    }
  }
  return { sock, stop };
}
