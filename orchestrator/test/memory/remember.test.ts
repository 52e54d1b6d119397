import { describe, expect, it } from 'vitest';
import { deny, grant, policyOf, RAN, REJECTED, scriptedChannel } from '../tools/pipeline-harness';
import { harness } from '../tools/pipeline-harness';
import { memoryHarness, proposal } from './memory-harness';

const QUOTE = '"test": "vitest run --reporter=dot"';

describe('remember: stored only when it cites this run and the gate lets it through', () => {
  it('a supported claim a person grants is stored with its provenance, and recorded as memory.stored', async () => {
    const channel = scriptedChannel(grant());
    const h = memoryHarness({ channel });
    const read = await h.call('read_file', { path: 'package.json' });
    expect(read.id).toBe('obs-1');
    const obs = await h.call('remember', proposal([{ observationId: 'obs-1', quote: QUOTE }]));
    expect(obs.outcome).toBe('ok');
    expect(obs.content).toMatch(/stored mem_\w+ \(repository, expires \d{4}-\d\d-\d\d\), supported by obs-1/);
    // The gate asked (default: ask), and the person's grant came before the record.
    expect(channel.asked).toHaveLength(1);
    expect(channel.asked[0]!.tool).toBe('remember');
    const types = h.types();
    expect(types.indexOf('approval.granted')).toBeLessThan(types.indexOf('memory.stored'));
    const { records, refused } = h.memory.store.read();
    expect(refused).toEqual([]);
    expect(records).toHaveLength(1);
    const r = records[0]!;
    expect(r).toMatchObject({
      text: 'The test command is vitest run with the dot reporter.',
      scope: 'repository',
      repository: h.memory.repository.id,
      source: { runId: h.log.runId, observationIds: ['obs-1'], citations: [{ observationId: 'obs-1', quote: QUOTE }] },
      confidence: 'high',
      verified: true,
      approvedBy: 'user:test via terminal',
    });
    expect(Date.parse(r.expiresAt) - Date.parse(r.createdAt)).toBe(90 * 86_400_000);
    const stored = h.log.events().find((e) => e.type === 'memory.stored');
    expect(stored?.data).toMatchObject({ record: { id: r.id, observationIds: ['obs-1'] }, repository: r.repository });
  });

  it('a quote not in the cited observation is refused at validation: nobody is asked, nothing stored', async () => {
    const channel = scriptedChannel();
    const h = memoryHarness({ channel });
    await h.call('read_file', { path: 'package.json' });
    const obs = await h.call(
      'remember',
      proposal([{ observationId: 'obs-1', quote: '"test": "jest --coverage --ci"' }], { text: 'tests use jest' }),
    );
    expect(obs.outcome).toBe('rejected');
    expect(obs.content).toContain('the quote does not appear verbatim in obs-1');
    expect(h.types()).toEqual(REJECTED);
    expect(channel.asked).toEqual([]);
    expect(h.memory.store.read().records).toEqual([]);
  });

  it('citing an observation that does not exist, or one of another run, is refused', async () => {
    // Run A saw the quote as its obs-1; run B's obs-1 is something else.
    const a = memoryHarness({ channel: scriptedChannel(grant()) });
    await a.call('read_file', { path: 'package.json' });
    const b = memoryHarness({ store: a.memory.store, channel: scriptedChannel() });
    await b.call('list_files', {});
    const missing = await b.call('remember', proposal([{ observationId: 'obs-9', quote: QUOTE }]));
    expect(missing.outcome).toBe('rejected');
    expect(missing.content).toContain("obs-9 is not an observation of this run: cite one of this run's own");
    const other = await b.call('remember', proposal([{ observationId: 'obs-1', quote: QUOTE }]));
    expect(other.outcome).toBe('rejected');
    expect(other.content).toMatch(/the quote does not appear verbatim in obs-1/);
    // An id that names another run's observation is no observation id at all.
    const foreign = await b.call('remember', proposal([{ observationId: `${a.log.runId}/obs-1`, quote: QUOTE }]));
    expect(foreign.outcome).toBe('rejected');
    expect(a.memory.store.read().records).toEqual([]);
  });

  it("the model's own words echoed back are no evidence: a refused call's observation cannot be cited", async () => {
    const h = memoryHarness({ channel: scriptedChannel() });
    const invented = 'the deploy key lives in /etc/secret on the build host';
    // obs-1: the refusal quotes nothing of the input, but a remember observation never counts anyway.
    await h.call('remember', proposal([{ observationId: 'obs-7', quote: invented }], { text: invented }));
    const laundered = await h.call('remember', proposal([{ observationId: 'obs-1', quote: 'not an observation' }]));
    expect(laundered.outcome).toBe('rejected');
    expect(laundered.content).toContain('obs-1 (remember, rejected) cannot support a record');
    // Nor a quote too short to say anything, nor the provenance line gatehouse wrote around the data.
    await h.call('read_file', { path: 'package.json' });
    const short = await h.call('remember', proposal([{ observationId: 'obs-3', quote: 'test' }]));
    expect(short.content).toContain('a quote must be at least 12 characters');
    const header = await h.call('remember', proposal([{ observationId: 'obs-3', quote: '[obs-3] read_file ok' }]));
    expect(header.content).toContain('the quote does not appear verbatim in obs-3');
    expect(h.memory.store.read().records).toEqual([]);
  });

  it('a denied remember stores nothing, and a deny rule refuses it without asking', async () => {
    const h = memoryHarness({ channel: scriptedChannel(deny('not worth keeping')) });
    await h.call('read_file', { path: 'package.json' });
    const obs = await h.call('remember', proposal([{ observationId: 'obs-1', quote: QUOTE }]));
    expect(obs.outcome).toBe('denied');
    expect(h.types()).not.toContain('memory.stored');
    expect(h.types()).not.toContain('tool.execution.started');
    expect(h.memory.store.read().records).toEqual([]);

    const ruled = memoryHarness({ policy: policyOf({ deny: ['remember'] }), channel: scriptedChannel() });
    await ruled.call('read_file', { path: 'package.json' });
    const refused = await ruled.call('remember', proposal([{ observationId: 'obs-1', quote: QUOTE }]));
    expect(refused.outcome).toBe('denied');
    expect(ruled.memory.store.read().records).toEqual([]);
  });

  it('asks in every mode by default (even sandboxed-auto); only an allow rule lets it through alone', async () => {
    // No channel: an ask is denied (headless runs never hang), so nothing is stored.
    const auto = memoryHarness({ mode: 'sandboxed-auto' });
    await auto.call('read_file', { path: 'package.json' });
    const asked = await auto.call('remember', proposal([{ observationId: 'obs-1', quote: QUOTE }]));
    expect(asked.outcome).toBe('denied');
    expect(auto.event<{ policyId: string; decision: string }>('tool.approval')).toMatchObject({
      decision: 'ask',
      policyId: 'gatehouse:memory-gate',
    });
    expect(auto.memory.store.read().records).toEqual([]);

    const allowed = memoryHarness({ policy: policyOf({ allow: ['remember'] }) });
    await allowed.call('read_file', { path: 'package.json' });
    const ok = await allowed.call('remember', proposal([{ observationId: 'obs-1', quote: QUOTE }]));
    expect(ok.outcome).toBe('ok');
    // The record is written while the call executes: after its grant, before its completion.
    expect(allowed.types()).toEqual([...RAN.slice(0, 4), 'memory.stored', ...RAN.slice(4)]);
    expect(allowed.memory.store.read().records[0]!.approvedBy).toBe('policy allow[0] remember');
  });

  it('a run without memory has no remember: not on its surface, and refused if called', async () => {
    const h = harness({ sandbox: { files: { 'a.txt': 'hello there, world\n' } } });
    const obs = await h.call('remember', proposal([{ observationId: 'obs-1', quote: 'hello there, world' }]));
    expect(obs.outcome).toBe('rejected');
    expect(obs.content).toMatch(/remember.*(not available|surface)/is);
  });
});
