/** The shell command classifier: what a `bash` command line would run, and how risky each part is. */
export { loadShellClassifier } from './parser';
export { createClassifier, MAX_SOURCE_LENGTH } from './classify';
export { classifyCommand } from './commands';
export type { Verdict } from './verdict';
export * from './types';
