import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Job } from './job';

export interface JobPlace {
  /** The run's repository, extracted from its snapshot (the same path on every worker). */
  repoDir: string;
  /** A folder of the worker's for the files the job carries (policy, config, model script). */
  filesDir: string;
  stateDir: string;
  store: string;
}

/**
 * The command line of the `gatehouse` child that runs a job: `run` for a run with no events yet,
 * `resume` for one another worker began (or one paused and submitted again). Everything the
 * submitter passed rides in the job; the worker adds only where things are on this machine.
 */
export async function jobArgs(job: Job, place: JobPlace, continuing: boolean): Promise<string[]> {
  // Every value as --flag=value and the task after `--`: a task or value that begins with a dash
  // (`--apply`, `--policy=…`) stays a value and never becomes one of the child's options.
  const common = [`--repo=${place.repoDir}`, '--json', `--state-dir=${place.stateDir}`, `--store=${place.store}`];
  if (job.kind === 'resume' || continuing) return ['resume', ...common, '--', job.runId];
  const f = job.flags;
  await fs.mkdir(place.filesDir, { recursive: true, mode: 0o700 });
  const file = async (name: string, text: string): Promise<string> => {
    const p = path.join(place.filesDir, name);
    await fs.writeFile(p, text, { mode: 0o600 });
    return p;
  };
  const model = f.script !== undefined ? `scripted:${await file('script.json', f.script)}` : f.model;
  const args = ['run', `--run-id=${job.runId}`, `--model=${model}`, ...common];
  if (f.policy !== undefined) args.push(`--policy=${await file('policy.json', f.policy)}`);
  if (f.config !== undefined) args.push(`--config=${await file('config.json', f.config)}`);
  if (f.mode) args.push(`--mode=${f.mode}`);
  if (f.image) args.push(`--image=${f.image}`);
  if (f.check) args.push(`--check=${f.check}`);
  const counts: Array<[keyof typeof f, string]> = [
    ['maxTurns', '--max-turns'],
    ['maxToolCalls', '--max-tool-calls'],
    ['maxTokens', '--max-tokens'],
    ['maxCost', '--max-cost'],
    ['approvalWait', '--approval-wait'],
  ];
  for (const [key, flag] of counts) if (f[key] !== undefined) args.push(`${flag}=${String(f[key])}`);
  if (f.maxWall !== undefined) args.push(`--max-wall=${f.maxWall}ms`);
  return [...args, '--', job.task];
}
