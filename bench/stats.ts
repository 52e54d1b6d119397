/** Percentiles over raw samples (nearest-rank), in milliseconds rounded to 0.01. */
export function summarize(samples: number[]): {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  min: number;
  max: number;
} {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    n: s.length,
    p50: r(at(0.5)),
    p95: r(at(0.95)),
    p99: r(at(0.99)),
    min: r(s[0] ?? NaN),
    max: r(s[s.length - 1] ?? NaN),
  };
}

export async function time(n: number, fn: (i: number) => Promise<unknown>, deadlineMs = 120_000): Promise<number[]> {
  const out: number[] = [];
  const stopAt = Date.now() + deadlineMs;
  for (let i = 0; i < n && Date.now() < stopAt; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

export const ratio = (a: number, b: number): number => Math.round((a / b) * 100) / 100;
