import { z } from 'zod';
import type { Tool } from './tool';
import { MEMORY_TOOLS } from './builtin/memory-tool-names';
import { PLAN_TOOLS } from './builtin/plan-tool-names';

/**
 * The tools that exist, and which of them the model sees in a turn. Visibility and permission are
 * separate gates: a tool outside the surface is neither shown nor accepted, and a visible tool's
 * calls still go through approval.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool<unknown>>();

  constructor(tools: Array<Tool<never>>) {
    for (const t of tools) {
      if (this.tools.has(t.name)) throw new Error(`tool ${t.name} registered twice`);
      this.tools.set(t.name, t);
    }
  }

  /** Adds tools known only once a run started (an MCP server's, listed from the sandbox). */
  add(tools: Array<Tool<never>>): void {
    for (const t of tools) if (this.tools.has(t.name)) throw new Error(`tool ${t.name} registered twice`);
    for (const t of tools) this.tools.set(t.name, t);
  }

  get(name: string): Tool<unknown> | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** The JSON schema of each visible tool, as shown to the model. */
  describe(surface: readonly string[]): Array<{ name: string; description: string; inputSchema: unknown }> {
    return surface.flatMap((name) => {
      const t = this.tools.get(name);
      if (!t) return [];
      return [
        { name, description: t.description, inputSchema: t.inputSchema ?? z.toJSONSchema(t.input, { io: 'input' }) },
      ];
    });
  }
}

/**
 * Which tools a run may see: read-only runs see only tools that can never change anything; a
 * profile can narrow further. Never widens beyond the registry; the plan tools only for plan runs.
 */
export function resolveSurface(
  registry: ToolRegistry,
  opts: { mode: string; allow?: readonly string[]; plan?: boolean; memory?: boolean },
): string[] {
  // remember only where memory is on (`--memory`): a run without it has nowhere to store a record.
  const names = registry.names().filter((n) => !PLAN_TOOLS.includes(n) && (opts.memory || !MEMORY_TOOLS.includes(n)));
  const all = names.filter((n) => (opts.allow ? opts.allow.includes(n) : true));
  // Plan runs see the plan tools in every mode: a read-only run can still plan.
  const plan = opts.plan ? PLAN_TOOLS.filter((n) => registry.get(n)) : [];
  if (opts.mode !== 'read-only') return [...all, ...plan];
  return [...all.filter((n) => registry.get(n)?.sideEffect === 'read'), ...plan];
}
