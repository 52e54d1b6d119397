import { compilePolicy, createPolicy, loadShellClassifier, type PolicyRequest } from '@gatehouse/orchestrator';
import { summarize } from './stats';

/**
 * Policy decisions with 1,000 rules, beside the same decisions with no rules (the baseline, in
 * the same run). Rules are indexed by tool and, for bash, by the command's first word, so the
 * cost should track the rules that could match, not the file's length.
 */
export async function benchPolicy(): Promise<Record<string, unknown>> {
  const classifier = await loadShellClassifier();
  const heads = [
    'npm',
    'git',
    'make',
    'cargo',
    'go',
    'python',
    'node',
    'yarn',
    'pnpm',
    'docker',
    'kubectl',
    'terraform',
    'ls',
    'cat',
    'rm',
    'cp',
    'mv',
    'curl',
    'wget',
    'ssh',
  ];
  const allow: string[] = [];
  const ask: string[] = [];
  const deny: string[] = [];
  for (let i = 0; i < 600; i++) [allow, ask, deny][i % 3]!.push(`bash(${heads[i % heads.length]} sub${i}*)`);
  for (let i = 0; i < 400; i++)
    [allow, ask, deny][i % 3]!.push(`${['edit_file', 'write_file', 'read_file'][i % 3]}(dir${i}/**/*.ts)`);
  const big = createPolicy(compilePolicy({ allow, ask, deny }, 'bench', classifier), 'confirm-each', classifier);
  const none = createPolicy(compilePolicy({}, 'bench', classifier), 'confirm-each', classifier);

  const requests: PolicyRequest[] = [
    { tool: 'bash', input: { command: 'npm test -- --run' }, readOnly: false, sideEffect: 'execute' },
    { tool: 'bash', input: { command: 'git sub301 --force && make sub12' }, readOnly: false, sideEffect: 'execute' },
    { tool: 'bash', input: { command: 'cat README.md | grep -n foo' }, readOnly: false, sideEffect: 'execute' },
    {
      tool: 'edit_file',
      input: { path: 'dir33/a/b/c.ts', oldText: 'a', newText: 'b' },
      readOnly: false,
      sideEffect: 'write',
    },
    { tool: 'read_file', input: { path: 'src/index.ts' }, readOnly: true, sideEffect: 'read' },
    { tool: 'write_file', input: { path: 'dir399/x.ts', content: '' }, readOnly: false, sideEffect: 'write' },
  ];
  const measure = (p: typeof big, n: number): number[] => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const r = requests[i % requests.length]!;
      const t = performance.now();
      p.decide(r);
      out.push(performance.now() - t);
    }
    return out;
  };
  measure(big, 2000); // warm-up (JIT, classification cache)
  measure(none, 2000);
  const withRules = summarize(measure(big, 30_000));
  const baseline = summarize(measure(none, 30_000));
  return {
    rules: allow.length + ask.length + deny.length,
    decisionMs: withRules,
    noRulesMs: baseline,
    ratioP99: Math.round((withRules.p99 / baseline.p99) * 100) / 100,
    note: 'bash command lines are classified once and cached per run; see classify for the parse cost',
    target: 'p99 <= 0.1 ms with 1,000 rules',
  };
}
