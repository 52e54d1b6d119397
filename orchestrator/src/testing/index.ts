/**
 * Test doubles that ship with the package (as openai-agents-js ships its own in src/testing): the
 * pipeline's ports without Docker. Production code never imports this folder.
 */
export { MemorySandbox, type MemorySandboxOptions, type SandboxCall } from './memory-sandbox';
export type { ExecReply, ExecRequest, ExecResponder } from './memory-primitives';
export { MemoryWorkspace, PrimitiveFailure, type MemoryWorkspaceInit } from './memory-workspace';
export { TestLog, type TestLogOptions } from './test-log';
export { noDriver } from './no-driver';
