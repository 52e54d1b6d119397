import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildReport } from '../../src/report/build-report';
import { renderMarkdown } from '../../src/report/render-markdown';
import type { RunReport } from '../../src/report/report-schema';

/** The report of the v6 fixture's plan run (`gatehouse plan`, by generate.mjs), read from a copy of the folder. */
const root = fileURLToPath(new URL('../../..', import.meta.url));
const v6 = path.join(root, 'test/fixtures/logs/v6');

export function planRunReport(): RunReport {
  const runs = JSON.parse(readFileSync(path.join(v6, 'runs.json'), 'utf8')) as Record<string, { runId: string }>;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-report-plan-'));
  try {
    cpSync(v6, dir, { recursive: true });
    chmodSync(path.join(dir, 'key', 'log.key'), 0o600);
    // verify: false: the report is built without auditing, so no key is needed.
    return buildReport(path.join(dir, 'state'), runs.plan!.runId, { verify: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const planRunMarkdown = (): string => renderMarkdown(planRunReport());
