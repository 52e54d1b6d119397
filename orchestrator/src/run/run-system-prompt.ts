import { systemPrompt } from '../context/system';
import { checkInstruction } from '../loop/final-check';
import type { Budgets } from './budgets';

/**
 * The system prompt a run's loop is given: the standing rules with the run's budgets, and, when a
 * check command decides the run, how. drive.ts builds it, and `gatehouse replay --mode trace` builds it
 * again from what the log records (the budgets, the check), so both must come from here.
 */
export function runSystemPrompt(budgets: Pick<Budgets, 'maxTurns' | 'maxToolCalls'>, check?: string): string {
  return check ? `${systemPrompt(budgets)}\n${checkInstruction(check)}` : systemPrompt(budgets);
}
