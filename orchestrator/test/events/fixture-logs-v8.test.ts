import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventData, type EventEnvelope } from '@gatehouse/shared';
import { RunLog } from '../../src/events/index';
import { fixtureFolder } from './fixture-folder';
import { fold } from '../../src/events/state';
import { replayRun } from '../../src/replay/replay-run';
import { mcpServersForResume } from '../../src/mcp/recorded-servers';

/**
 * What schema version 8 added, as the v8 fixture's MCP run holds it (test/fixtures/logs/generate.mjs): a
 * real `gatehouse run` whose trusted config declares a stdio MCP server with an env value, paused on its
 * asked call (`mcpPaused`), approved, and resumed with `--config` to its end (`mcpResumed`): how the
 * server starts in run.started (the env's name, never its value), `mcp.listed`, `mcp.resumed`, and the
 * call run once. fixture-logs.test.ts runs the older checks (verify, show, the fold) over every v8 run.
 */
const { runs, copy } = fixtureFolder(8);
const of = <T extends EventEnvelope['type']>(events: EventEnvelope[], type: T) =>
  events.filter((e) => e.type === type) as Extract<EventEnvelope, { type: T }>[];

describe('fixture logs v8: MCP servers survive a resume', () => {
  const runId = runs.mcpPaused!.runId;

  it('one run under two names: paused on the asked MCP call (exit 3), then resumed to its end (exit 0)', () => {
    expect(runs.mcpResumed!.runId).toBe(runId);
    expect([runs.mcpPaused!.exit, runs.mcpResumed!.exit]).toEqual([3, 0]);
  });

  it('every event is of version 8 and fits its schema; run.started records the server, never the env value', () => {
    const { state } = copy();
    const text = readFileSync(path.join(state, 'runs', runId, 'events.jsonl'), 'utf8');
    for (const line of text.trimEnd().split('\n')) {
      const e = JSON.parse(line) as { type: keyof typeof EventData; data: unknown; schemaVersion: number };
      expect(e.schemaVersion).toBe(8);
      expect(EventData[e.type].safeParse(e.data).success).toBe(true);
    }
    const events = RunLog.readEvents(state, runId);
    const started = events[0]!;
    if (started.type !== 'run.started') throw new Error('no run.started');
    const recorded = started.data.config?.environment?.mcp;
    expect(recorded).toEqual({
      notes: { transport: 'stdio', command: 'node', args: ['mcp/notes.mjs'], env: ['NOTES_LABEL'] },
    });
    expect(text).not.toContain('"NOTES_LABEL":"fixture"');
    // The value is given back on resume; without it the run is refused.
    expect(() => mcpServersForResume(runId, recorded, undefined)).toThrow('mcp.notes.env.NOTES_LABEL');
  });

  it('listed at start, listed again on resume, unchanged; the approved call ran once, its write read back', () => {
    const { state } = copy();
    const events = RunLog.readEvents(state, runId);
    const [listed] = of(events, 'mcp.listed');
    expect(listed?.data).toMatchObject({ server: 'notes', ok: true });
    expect(listed?.data.tools.map((t) => t.name)).toEqual(['mcp__notes__note']);
    expect(listed?.data.tools[0]!.description).toContain('Appends a line to notes.txt (fixture).');
    const resumedAt = events.findIndex((e) => e.type === 'run.resumed');
    const [again] = of(events, 'mcp.resumed');
    expect(again?.seq).toBeGreaterThan(events[resumedAt]!.seq);
    expect(again?.data).toMatchObject({ server: 'notes', ok: true, unchanged: ['mcp__notes__note'], changed: [] });
    const starts = of(events, 'tool.execution.started').filter((e) => e.data.primitive === 'mcp_call');
    expect(starts).toHaveLength(1);
    expect(starts[0]!.seq).toBeGreaterThan(again!.seq);
    expect(starts[0]!.data).toMatchObject({ primitive: 'mcp_call', input: { server: 'notes', tool: 'note' } });
    const observed = of(events, 'tool.observation').map((e) => e.data.content);
    expect(observed[0]).toContain('data from MCP server notes (tool note)');
    expect(observed[1]).toContain('written by the MCP server');
    expect(fold(events)).toMatchObject({ status: 'final' });
  });

  it('a trace made today of the MCP run rebuilds every context it was sent, across the resume', async () => {
    const { state, key } = copy();
    const r = await replayRun(runId, { mode: 'trace', stateDir: state, key });
    expect({ verdict: r.outcome.verdict, differed: r.outcome.differed, compared: r.outcome.compared }).toEqual({
      verdict: 'match',
      differed: 0,
      compared: 3,
    });
  });
});
