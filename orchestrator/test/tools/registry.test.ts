import { describe, expect, it } from 'vitest';
import { codingTools, resolveSurface } from '../../src/index';

/** Input field names are a contract scripts and tests rely on (issue 3): pinned here. */
const CONTRACT: Record<string, { required: string[]; optional: string[]; sideEffect: string }> = {
  read_file: { required: ['path'], optional: ['offset', 'limit'], sideEffect: 'read' },
  write_file: { required: ['path', 'content'], optional: [], sideEffect: 'write' },
  edit_file: { required: ['path', 'oldText', 'newText'], optional: [], sideEffect: 'write' },
  list_files: { required: [], optional: ['path'], sideEffect: 'read' },
  glob: { required: ['pattern'], optional: [], sideEffect: 'read' },
  grep: { required: ['pattern'], optional: ['path'], sideEffect: 'read' },
  bash: { required: ['command'], optional: ['description', 'timeout'], sideEffect: 'execute' },
  git_status: { required: [], optional: [], sideEffect: 'read' },
  git_diff: { required: [], optional: ['path'], sideEffect: 'read' },
  read_artifact: { required: ['ref'], optional: ['offset', 'limit'], sideEffect: 'read' },
  delegate: {
    required: ['task', 'tools', 'paths', 'budget', 'expect'],
    optional: ['evidence'],
    sideEffect: 'delegate',
  },
  // Plan mode's two tools (issue 15): registered with the rest, on the surface of plan runs only.
  remember: {
    required: ['text', 'scope', 'confidence', 'citations'],
    optional: ['expiresInDays'],
    sideEffect: 'write',
  },
  submit_plan: { required: ['tasks'], optional: [], sideEffect: 'write' },
  complete_task: { required: ['taskId', 'summary'], optional: [], sideEffect: 'read' },
};

describe('the coding tool set', () => {
  const registry = codingTools();

  it('has exactly the contracted tools', () => {
    expect(registry.names().sort()).toEqual(Object.keys(CONTRACT).sort());
  });

  it.each(Object.entries(CONTRACT))(
    '%s: JSON schema generated from zod, with the contracted fields and no others',
    (name, c) => {
      const [described] = registry.describe([name]);
      const schema = described!.inputSchema as {
        type: string;
        properties: Record<string, unknown>;
        required?: string[];
        additionalProperties: boolean;
      };
      expect(schema.type).toBe('object');
      expect(Object.keys(schema.properties).sort()).toEqual([...c.required, ...c.optional].sort());
      expect((schema.required ?? []).sort()).toEqual([...c.required].sort());
      expect(schema.additionalProperties).toBe(false);
      expect(described!.description.length).toBeGreaterThan(20);
      expect(registry.get(name)!.sideEffect).toBe(c.sideEffect);
    },
  );

  it('read-only runs see only tools that cannot change anything; visibility never widens', () => {
    const ro = resolveSurface(registry, { mode: 'read-only' });
    expect(ro).not.toContain('bash');
    expect(ro).not.toContain('write_file');
    expect(ro).not.toContain('edit_file');
    expect(ro).not.toContain('delegate');
    expect(ro).toContain('read_file');
    expect(resolveSurface(registry, { mode: 'sandboxed-auto', allow: ['read_file', 'no_such_tool'] })).toEqual([
      'read_file',
    ]);
  });
});
