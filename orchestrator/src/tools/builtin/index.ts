import { ToolRegistry } from '../registry';
import { bash } from './bash';
import { completeTask } from './complete-task';
import { delegate } from './delegate';
import { editFile } from './edit-file';
import { gitDiff } from './git-diff';
import { gitStatus } from './git-status';
import { glob } from './glob';
import { grep } from './grep';
import { listFiles } from './list-files';
import { readArtifact } from './read-artifact';
import { readFile } from './read-file';
import { remember } from './remember';
import { submitPlan } from './submit-plan';
import { writeFile } from './write-file';

export const CODING_TOOLS = [
  readFile,
  writeFile,
  editFile,
  listFiles,
  glob,
  grep,
  bash,
  gitStatus,
  gitDiff,
  readArtifact,
  delegate,
  // Memory's: registered always, on the surface of runs with memory only (registry.ts resolveSurface).
  remember,
  // Plan mode's: registered always, on the surface of plan runs only (registry.ts resolveSurface).
  submitPlan,
  completeTask,
] as const;

export function codingTools(): ToolRegistry {
  return new ToolRegistry([...CODING_TOOLS] as never[]);
}
