import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TOOL_NAMES, TOOL_SUBJECTS } from '../../src/policy/tool-names';
import { codingTools } from '../../src/tools/builtin/index';

/** The policy knows the tools by name only (tools/ imports policy/): the two lists must be one. */
describe("the policy's tool names", () => {
  it('are exactly the tools the registry has', () => {
    expect([...TOOL_NAMES].sort()).toEqual(codingTools().names().sort());
  });

  it("fit each tool's input: a tool that takes a path is a path tool, bash's pattern is over its command", () => {
    const registry = codingTools();
    for (const name of TOOL_NAMES) {
      const schema = z.toJSONSchema(registry.get(name)!.input, { io: 'input' }) as { properties?: object };
      const keys = Object.keys(schema.properties ?? {});
      if (keys.includes('path')) expect(TOOL_SUBJECTS[name], name).toBe('path');
      if (TOOL_SUBJECTS[name] === 'command') expect(keys, name).toContain('command');
    }
  });
});
