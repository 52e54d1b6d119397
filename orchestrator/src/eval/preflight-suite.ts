import { loadProjectConfig } from '../config/index';
import { resolveRunPolicy } from '../policy/index';
import { createProvider } from '../providers/index';
import { DEFAULT_BUDGETS } from '../run/budgets';
import { priceFor } from '../usage/price-for';
import { requirePrice } from '../usage/require-price';
import { policyInputs } from '../cli/run-config';
import type { FileProblem } from '../problems/file-problems';
import type { EvalTask, Suite } from './suite-schema';
import { SuiteError } from './suite-error';

/**
 * What `gatehouse run` refuses before it starts anything (a bad model spec or script, a missing
 * key, an invalid config or policy, a cost budget without a price), asked of every task before the
 * first one runs: a suite with a bad task runs none (exit 2) instead of failing half way through.
 * The same loaders as run.ts's runCommand, so the two cannot disagree on what is valid.
 */
export async function preflightSuite(suite: Suite): Promise<void> {
  const problems: FileProblem[] = [];
  for (const [i, t] of suite.tasks.entries()) problems.push(...(await preflightTask(t, i, suite.file)));
  if (problems.length > 0) throw new SuiteError(suite.file, problems);
}

async function preflightTask(t: EvalTask, i: number, file: string): Promise<FileProblem[]> {
  const problems: FileProblem[] = [];
  const problem = (key: string, e: unknown) =>
    problems.push({ file, path: key ? `tasks[${i}].${key}` : `tasks[${i}]`, message: messageOf(e) });
  try {
    createProvider(t.model);
  } catch (e) {
    problem(
      t.modelFrom === 'task' ? 'model' : '',
      t.modelFrom === 'task' ? e : `the model (from ${t.modelFrom}): ${messageOf(e)}`,
    );
  }
  let config: ReturnType<typeof loadProjectConfig>;
  try {
    config = loadProjectConfig({
      repoDir: t.repository,
      ...(t.config !== undefined ? { configFile: t.config } : {}),
      check: t.check,
    });
  } catch (e) {
    problem(t.config !== undefined ? 'config' : 'repository', e);
    return problems;
  }
  try {
    await resolveRunPolicy({
      repoDir: t.repository,
      ...(t.policy !== undefined ? { policyFile: t.policy } : {}),
      ...policyInputs(config.policy),
    });
  } catch (e) {
    problem(t.policy !== undefined ? 'policy' : 'repository', e);
  }
  try {
    const maxCostUsd = t.budgets.maxCostUsd ?? config.budgets.maxCostUsd;
    requirePrice(
      t.model,
      { ...DEFAULT_BUDGETS, ...(maxCostUsd !== undefined ? { maxCostUsd } : {}) },
      priceFor(t.model, config.prices),
    );
  } catch (e) {
    problem('budgets.maxCostUsd', e);
  }
  return problems;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
