import { describe, expect, it } from 'vitest';
import { EventData } from '@gatehouse/shared';
import type { ResolvedConfig } from '../../src/config/types';
import { configFromRecord, recordedEnvironment } from '../../src/run/recorded-environment';

const config: ResolvedConfig = {
  source: '/work/c.json',
  image: 'preset:python',
  setup: ['python3 -m venv .venv', '.venv/bin/pip install -r requirements.txt'],
  check: '.venv/bin/pytest -q',
  egress: { setup: ['pypi.example.net', 'files.pythonhosted.example.net'], agent: [], deny: ['evil.example'] },
  copy: { exclude: ['data/**'], include: ['.env.example'] },
  limits: { memoryMb: 2048, diskMb: 512 },
  budgets: { maxTurns: 5 },
  ignored: ['egress.setup other.example'],
  sha256: 'a'.repeat(64),
};

describe('the environment recorded in run.started, and restored for resume', () => {
  it('records what makes the sandboxes (secret names, never values), valid against the event schema', () => {
    const environment = recordedEnvironment(config, ['PIP_INDEX_TOKEN']);
    const data = { source: config.source, sha256: config.sha256, ignored: config.ignored, environment };
    expect(EventData['run.started'].shape.config.parse(data)).toEqual(data);
    expect(JSON.stringify(environment)).not.toContain('budgets');
    expect(environment.setupSecrets).toEqual(['PIP_INDEX_TOKEN']);
  });

  it('round-trips into the config resume holds the run to (budgets are restored on their own)', () => {
    const record = {
      source: config.source,
      sha256: config.sha256,
      ignored: config.ignored,
      environment: recordedEnvironment(config, []),
    };
    const { budgets: _b, policy: _p, ...rest } = config;
    expect(configFromRecord(record)).toEqual({ ...rest, budgets: {} });
  });

  it('a run recorded before environments were recorded resumes with the default sandbox', () => {
    expect(configFromRecord(undefined)).toBeUndefined();
    expect(configFromRecord({ source: 'defaults', sha256: 'b'.repeat(64), ignored: [] })).toBeUndefined();
  });
});
