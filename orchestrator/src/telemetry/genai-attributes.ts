/**
 * Attribute names and values of the OpenTelemetry GenAI semantic conventions (now in
 * open-telemetry/semantic-conventions-genai; status: development) that gatehouse's spans carry.
 * Copied here rather than imported from `@opentelemetry/semantic-conventions/incubating`, as that
 * package advises for unstable names: an upgrade of it cannot rename what we send, and this file
 * stays free of the SDK, which is only loaded when telemetry is configured.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
} as const;

/** `error.type` (stable, general conventions): a low-cardinality name of what went wrong. */
export const ERROR_TYPE = 'error.type';

/** The `gen_ai.operation.name` values gatehouse emits. */
export const OPERATION = { invokeAgent: 'invoke_agent', chat: 'chat', executeTool: 'execute_tool' } as const;

/** gatehouse's own attributes: what the conventions have no name for (runs, decisions, outcomes). */
export const GATEHOUSE = {
  runId: 'gatehouse.run.id',
  rootRunId: 'gatehouse.run.root_id',
  parentRunId: 'gatehouse.run.parent_id',
  depth: 'gatehouse.run.depth',
  mode: 'gatehouse.run.mode',
  status: 'gatehouse.run.status',
  decidedBy: 'gatehouse.run.decided_by',
  stopReason: 'gatehouse.run.stop_reason',
  costUsd: 'gatehouse.usage.cost_usd',
  turn: 'gatehouse.turn',
  contextSha256: 'gatehouse.context.sha256',
  validationStage: 'gatehouse.tool.validation.stage',
  outcome: 'gatehouse.tool.outcome',
  executor: 'gatehouse.tool.executor',
  primitive: 'gatehouse.tool.primitive',
  executionStatus: 'gatehouse.tool.execution.status',
  exitCode: 'gatehouse.tool.exit_code',
  errorCode: 'gatehouse.tool.error.code',
  childRunId: 'gatehouse.sub_agent.run.id',
  childStatus: 'gatehouse.sub_agent.status',
  decision: 'gatehouse.approval.decision',
  rule: 'gatehouse.approval.rule',
  approver: 'gatehouse.approval.approver',
  channel: 'gatehouse.approval.channel',
  scope: 'gatehouse.approval.scope',
  requestId: 'gatehouse.approval.request_id',
  actionHash: 'gatehouse.approval.action_hash',
  risk: 'gatehouse.approval.risk',
  paused: 'gatehouse.paused',
  resumed: 'gatehouse.resumed',
  unfinished: 'gatehouse.unfinished',
} as const;

/** The span of each decision on a call: the policy's, and a person's when the policy asked. */
export const APPROVAL_SPAN = 'gatehouse.approval';
