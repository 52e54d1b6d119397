// Shared by the workflow's scripts: the GitHub Actions runner's files and variables, and gatehouse itself.
// Node built-ins only: these run before anything is installed.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';

/** A required variable of the runner's environment, or a clear stop naming it. */
export function required(name) {
  const value = process.env[name];
  if (value === undefined || value === '') fail(`${name} is not set; this runs inside the workflow (see README)`);
  return value;
}

/** Stops the step with a message the job log shows as an error annotation. */
export function fail(message, code = 1) {
  process.stderr.write(`::error::gatehouse workflow: ${message.replace(/[\r\n]+/g, ' ')}\n`);
  process.exit(code);
}

/** The event that started the workflow (GITHUB_EVENT_PATH). */
export function readEvent() {
  return JSON.parse(readFileSync(required('GITHUB_EVENT_PATH'), 'utf8'));
}

/**
 * A step output, written to GITHUB_OUTPUT with a random delimiter: a value the event controls
 * (a comment's text) cannot end the block early and set other outputs.
 */
export function setOutput(name, value) {
  const text = String(value);
  let delimiter;
  do delimiter = `gatehouse_${randomBytes(12).toString('hex')}`;
  while (text.includes(delimiter));
  appendFileSync(required('GITHUB_OUTPUT'), `${name}<<${delimiter}\n${text}\n${delimiter}\n`);
}

/** Markdown for the run's page on GitHub; printed to the log when there is no summary file. */
export function appendSummary(markdown) {
  const file = process.env.GITHUB_STEP_SUMMARY;
  if (file) appendFileSync(file, markdown.endsWith('\n') ? markdown : `${markdown}\n`);
  else process.stdout.write(markdown);
}

/** Where this job keeps gatehouse's runs and what it uploads: one directory, the artifact. */
export function artifactPaths() {
  const dir = path.resolve(process.env.GATEHOUSE_ARTIFACT_DIR || path.join(required('RUNNER_TEMP'), 'gatehouse'));
  return { dir, stateDir: path.join(dir, 'state'), meta: path.join(dir, 'meta.json') };
}

/**
 * Runs the gatehouse CLI headless: CI=true, no standard input, output to the job log (or captured).
 * GATEHOUSE_BIN names another command than `gatehouse` on PATH (a test, a checkout).
 *
 * What gatehouse prints holds text the repository and the model control (the answer, commands'
 * output): a line of it starting `::` would be a workflow command to the runner (a forged
 * `::error::`, `::add-mask::`, `::set-output`). The runner is told to stop reading commands, with a
 * token no one can guess, for as long as gatehouse runs; its standard error goes to the same pipe so
 * no line can overtake the stop.
 */
export function gatehouse(args, { cwd, capture = false } = {}) {
  const bin = process.env.GATEHOUSE_BIN || 'gatehouse';
  const token = `gatehouse-${randomBytes(16).toString('hex')}`;
  writeSync(1, `::stop-commands::${token}\n`);
  let r;
  try {
    r = spawnSync(bin, args, {
      cwd,
      env: { ...process.env, CI: 'true' },
      stdio: ['ignore', capture ? 'pipe' : 'inherit', 1],
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
  } finally {
    writeSync(1, `::${token}::\n`);
  }
  if (r.error) fail(`could not start ${bin}: ${r.error.message} (is gatehouse installed? see README)`);
  return { status: r.status ?? 1, stdout: r.stdout ?? '' };
}

/** Run and request ids as gatehouse writes them; anything else from a form is refused before use. */
export const RUN_ID = /^run_[A-Za-z0-9_-]{1,60}$/;
export const REQUEST_ID = /^apr_[A-Za-z0-9_-]{1,60}$/;

/** GET on the GitHub API with the job's token; any failure refuses (fail closed). */
export async function api(pathname) {
  const base = (process.env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, '');
  const res = await fetch(`${base}${pathname}`, {
    headers: {
      authorization: `Bearer ${required('GITHUB_TOKEN')}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
    },
    signal: AbortSignal.timeout(15_000),
  }).catch((e) => fail(`the GitHub API did not answer ${pathname}: ${e.message}`));
  if (!res.ok) fail(`the GitHub API answered ${res.status} to ${pathname}; no run without an answer`);
  return res.json();
}

