export * from './sandbox/index';
export * from './events/index';
export { fold, reduce, initialState, StateTracker, nextObservationId, type RunState } from './events/state';
export { ToolPipeline, type ToolCall, type Observation, type PipelineDeps } from './tools/pipeline';
export { ToolRegistry, resolveSurface } from './tools/registry';
export { codingTools, CODING_TOOLS } from './tools/builtin/index';
export type { Tool, ToolLimits } from './tools/tool';
export { interimPolicy, Mode, type ApprovalPolicy } from './policy/interim';
