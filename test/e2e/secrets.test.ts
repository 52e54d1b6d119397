import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxDriver } from '@gatehouse/orchestrator';
import { makeRepo, startDriver } from '../support/sandbox';
import { pipelineFor } from '../support/pipeline';

/** Every byte gatehouse wrote for a run: the log and all artifacts. */
function runBytes(runDir: string): string {
  const artifacts = path.join(runDir, 'artifacts');
  const files = [path.join(runDir, 'events.jsonl'), ...readdirSafe(artifacts).map((f) => path.join(artifacts, f))];
  return files.map((f) => readFileSync(f, 'latin1')).join('\n');
}
const readdirSafe = (d: string) => {
  try {
    return readdirSync(d);
  } catch {
    return [];
  }
};

describe('secrets never reach the log or artifacts', () => {
  const envSecret = `gh-test-${randomBytes(12).toString('hex')}`;
  const fileToken = `sk-${randomBytes(24).toString('base64url')}`;
  let driver: SandboxDriver;
  let sandbox: Sandbox;
  beforeAll(async () => {
    process.env.GATEHOUSE_TEST_API_KEY = envSecret;
    driver = await startDriver();
    // A repository that carries a token in a file, as untrusted repositories do.
    sandbox = await driver.createSandbox({
      runId: 'run_secrets',
      repoDir: makeRepo({ '.env': `OPENAI_API_KEY=${fileToken}\n`, 'README.md': '# x\n' }),
    });
  });
  afterAll(async () => {
    delete process.env.GATEHOUSE_TEST_API_KEY;
    await driver?.close();
  });

  it(
    'redacts an environment secret and a token in command output, ' + 'in events, artifacts and what the model sees',
    async () => {
      const h = pipelineFor(sandbox, { limits: { observationBudget: 2000 } });
      // The model (or the repository) gets hold of the values and makes them flow through every field.
      const echo = await h.call('bash', { command: `echo ${envSecret}; cat .env`, description: `leak ${envSecret}` });
      const read = await h.call('read_file', { path: '.env' });
      const flood = await h.call('bash', {
        command: `for i in $(seq 1 300); do echo "$i ${envSecret} $(cat .env)"; done`,
      });
      expect(flood.artifactRef).toMatch(/^art-/);
      for (const obs of [echo, read, flood]) {
        expect(obs.content).not.toContain(envSecret);
        expect(obs.content).not.toContain(fileToken);
        expect(obs.content).toContain('[REDACTED');
      }
      const bytes = runBytes(h.log.runDir);
      expect(bytes.length).toBeGreaterThan(10_000);
      expect(bytes).not.toContain(envSecret);
      expect(bytes).not.toContain(fileToken);
      // Still readable: the rest of the output is there.
      expect(bytes).toContain('300 [REDACTED');
    },
  );
});
