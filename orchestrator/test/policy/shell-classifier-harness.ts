import { readFileSync } from 'node:fs';
import { beforeAll, expect } from 'vitest';
import {
  loadShellClassifier,
  type CommandClass,
  type ShellAnalysis,
  type ShellClassifier,
} from '../../src/policy/shell/index';

/** The shell-command corpus and the helpers shared by the shell-classifier tests. */

export interface CorpusEntry {
  command: string;
  class: CommandClass;
  followable: boolean;
  texts?: string[];
  decision: 'allow' | 'ask' | 'deny';
  note?: string;
}

export interface PolicyFile {
  mode: string;
  allow: string[];
  ask: string[];
  deny: string[];
}

export const corpusDir = new URL('./corpus/', import.meta.url);
export const corpus = JSON.parse(readFileSync(new URL('shell-commands.json', corpusDir), 'utf8')) as CorpusEntry[];
export const policy = JSON.parse(readFileSync(new URL('policy.json', corpusDir), 'utf8')) as PolicyFile;

/** The classifier, loaded once before the tests of each file that calls useShellClassifier. */
export let shell: ShellClassifier;
export function useShellClassifier(): void {
  beforeAll(async () => {
    shell = await loadShellClassifier();
  });
}

export const texts = (a: ShellAnalysis) => a.commands.map((c) => c.text);
export const one = (command: string) => {
  const a = shell.classify(command);
  expect(a.commands, command).toHaveLength(1);
  return a.commands[0]!;
};
export const label = (e: CorpusEntry) =>
  JSON.stringify(e.command.length > 70 ? `${e.command.slice(0, 67)}...` : e.command);
