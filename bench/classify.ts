import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadShellClassifier } from '../orchestrator/src/policy/shell/index';

/**
 * The shell classifier's cost: every command of the policy corpus, classified over and over for a
 * bounded time. It runs inside the tool pipeline on every `bash` call, so its p99 is what a user
 * would feel. Reads the corpus relative to the working directory (bench.sh runs from the
 * repository root). Target: >= 10,000 commands/s.
 */
const CORPUS = path.resolve('orchestrator', 'test', 'policy', 'corpus', 'shell-commands.json');
const WARMUP_MS = 300;
const MEASURE_MS = 2_000;

export async function benchClassifier(): Promise<{ commandsPerSecond: number; p50Us: number; p99Us: number }> {
  const commands = (JSON.parse(readFileSync(CORPUS, 'utf8')) as { command: string }[]).map((e) => e.command);
  const classifier = await loadShellClassifier();
  const warmUntil = performance.now() + WARMUP_MS;
  for (let i = 0; performance.now() < warmUntil; i++) classifier.classify(commands[i % commands.length]!);

  const samples: number[] = [];
  const start = performance.now();
  const stopAt = start + MEASURE_MS;
  for (let i = 0; performance.now() < stopAt; i++) {
    const t = performance.now();
    classifier.classify(commands[i % commands.length]!);
    samples.push(performance.now() - t);
  }
  const elapsedS = (performance.now() - start) / 1000;
  samples.sort((a, b) => a - b);
  const us = (q: number) =>
    Math.round((samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)] ?? NaN) * 1000 * 10) / 10;
  return { commandsPerSecond: Math.round(samples.length / elapsedS), p50Us: us(0.5), p99Us: us(0.99) };
}
