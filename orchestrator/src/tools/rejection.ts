import type { z } from 'zod';
import type { EventDataOf, ValidationError } from '@gatehouse/shared';
import type { ToolRegistry } from './registry';
import type { Tool } from './tool';

/** zod issues as validation errors: the schema path of each bad field and what was wrong. */
export function schemaErrors(error: z.ZodError): ValidationError[] {
  return error.issues.slice(0, 10).map((issue) => ({
    path: issue.path.map(String).join('.'),
    code: issue.code,
    message: issue.code === 'unrecognized_keys' ? `unknown field(s): ${issue.keys.join(', ')}` : issue.message,
  }));
}

/**
 * What the model reads when a call is refused before it runs: what was wrong, where, and what to
 * do instead. Short on purpose; the full detail is in the log.
 */
export function rejectionText(
  stage: EventDataOf<'tool.validation'>['stage'],
  toolName: string,
  errors: ValidationError[],
  ctx: { surface: readonly string[]; tool?: Tool<unknown>; registry: ToolRegistry },
): string {
  const lines = [
    `rejected: ${toolName} was not run (${
      stage === 'known' || stage === 'surface'
        ? 'unavailable tool'
        : stage === 'schema'
          ? 'invalid input'
          : stage === 'plan'
            ? 'outside the approved plan'
            : 'failed a check'
    })`,
  ];
  for (const e of errors) lines.push(`- ${e.path ? `${e.path}: ` : ''}${e.message}`);
  if (stage === 'known' || stage === 'surface') lines.push(`available tools: ${ctx.surface.join(', ')}`);
  if (stage === 'schema' && ctx.tool) lines.push(`expected input: ${signature(ctx.tool, ctx.registry)}`);
  return lines.join('\n');
}

function signature(tool: Tool<unknown>, registry: ToolRegistry): string {
  const described = registry.describe([tool.name])[0]?.inputSchema as
    { properties?: Record<string, { type?: string }>; required?: string[] } | undefined;
  const props = Object.entries(described?.properties ?? {});
  const required = new Set(described?.required ?? []);
  return (
    `${tool.name} {` + `${props.map(([k, v]) => `${k}${required.has(k) ? '' : '?'}: ${v.type ?? 'value'}`).join(', ')}}`
  );
}
