import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseJsonText } from '../problems/json-text';
import { problemsFromIssues, type FileProblem } from '../problems/file-problems';
import { SuiteFile, type EvalTask, type Suite, type SuiteTask } from './suite-schema';
import { SuiteError } from './suite-error';

export interface LoadSuiteOptions {
  /** `--model`: the model of every task that names none (over the suite's `model`). */
  model?: string;
  /** Where a relative `scripted:PATH` of `--model` starts (default: the current directory). */
  cwd?: string;
}

/**
 * Reads and checks a suite file and resolves its paths against the file's folder. Every problem is
 * collected (syntax, unknown or missing keys, duplicate ids, paths that are not there) and thrown
 * at once as a SuiteError; nothing is run by this.
 */
export function loadSuite(file: string, o: LoadSuiteOptions = {}): Suite {
  const full = path.resolve(file);
  const fail = (p: Omit<FileProblem, 'file'>): never => {
    throw new SuiteError(full, [{ file: full, ...p }]);
  };
  let text = '';
  try {
    text = readFileSync(full, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    fail({ path: '', message: `cannot read it: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}` });
  }
  const json = parseJsonText(text.replace(/^\uFEFF/, ''));
  if (!json.ok)
    return fail({ path: '', line: json.line, column: json.column, message: `not valid JSON: ${json.message}` });
  const problems: FileProblem[] = json.duplicates.map((d) => ({
    file: full,
    path: d.path,
    line: d.line,
    column: d.column,
    message: 'this key is given twice',
  }));
  const parsed = SuiteFile.safeParse(json.value);
  if (!parsed.success) problems.push(...problemsFromIssues(parsed.error.issues, json.value, SuiteFile, full));
  if (!parsed.success || problems.length > 0) throw new SuiteError(full, problems);

  const base = path.dirname(full);
  const suite = parsed.data;
  const seen = new Map<string, number>();
  const tasks: EvalTask[] = [];
  suite.tasks.forEach((t, i) => {
    const at = (key: string) => `tasks[${i}].${key}`;
    const first = seen.get(t.id);
    if (first !== undefined)
      problems.push({
        file: full,
        path: at('id'),
        message: `"${t.id}" is the id of tasks[${first}] too; ids are unique`,
      });
    seen.set(t.id, i);
    const repository = path.resolve(base, t.repository);
    const notDir = kindProblem(repository, 'directory');
    if (notDir) problems.push({ file: full, path: at('repository'), message: notDir });
    for (const key of ['config', 'policy'] as const) {
      const p = t[key] === undefined ? undefined : kindProblem(path.resolve(base, t[key]), 'file');
      if (p) problems.push({ file: full, path: at(key), message: p });
    }
    const model = modelOf(t, suite, o, base);
    if (!model)
      problems.push({
        file: full,
        path: at('model'),
        message: 'no model: give the task a "model", the suite a "model", or pass --model',
      });
    else tasks.push(evalTask(t, repository, base, model, { ...suite.budgets, ...t.budgets }));
  });
  if (problems.length > 0) throw new SuiteError(full, problems);
  return { file: full, name: suite.name ?? null, tasks };
}

function evalTask(
  t: SuiteTask,
  repository: string,
  base: string,
  model: Pick<EvalTask, 'model' | 'modelFrom'>,
  budgets: EvalTask['budgets'],
): EvalTask {
  return {
    id: t.id,
    repository,
    task: t.task,
    check: t.check.trim(),
    ...(t.config !== undefined ? { config: path.resolve(base, t.config) } : {}),
    ...(t.policy !== undefined ? { policy: path.resolve(base, t.policy) } : {}),
    ...model,
    budgets,
  };
}

/** The task's own model, else `--model`, else the suite's; a scripted path made absolute from where it was written. */
function modelOf(
  t: SuiteTask,
  suite: SuiteFile,
  o: LoadSuiteOptions,
  base: string,
): Pick<EvalTask, 'model' | 'modelFrom'> | undefined {
  if (t.model !== undefined) return { model: resolveScripted(t.model, base), modelFrom: 'task' };
  if (o.model !== undefined) return { model: resolveScripted(o.model, o.cwd ?? process.cwd()), modelFrom: '--model' };
  if (suite.model !== undefined) return { model: resolveScripted(suite.model, base), modelFrom: 'suite' };
  return undefined;
}

/** `scripted:REL` → `scripted:/abs/REL` (the run is started elsewhere, and its log records the path). */
export function resolveScripted(spec: string, base: string): string {
  const m = /^scripted:(.*)$/i.exec(spec.trim());
  return m?.[1]?.trim() ? `scripted:${path.resolve(base, m[1].trim())}` : spec.trim();
}

function kindProblem(full: string, kind: 'file' | 'directory'): string | undefined {
  try {
    const st = statSync(full);
    if (kind === 'directory' ? st.isDirectory() : st.isFile()) return undefined;
    return `${full} is not a ${kind}`;
  } catch {
    return `no such ${kind}: ${full}`;
  }
}
