import { describe, expect, it } from 'vitest';
import { grant, scriptedChannel } from '../tools/pipeline-harness';
import { memoryHarness, proposal } from './memory-harness';

/**
 * Red team (issue 17): text the model wrote itself, put into the workspace and read back, is an
 * observation of the workspace in form only. Citing it would let a model "verify" any claim.
 */
describe('remember: the model cannot launder its own words into evidence', () => {
  it('a quote the model wrote into a file (write_file) and read back is refused; nobody is asked', async () => {
    const channel = scriptedChannel(grant());
    const h = memoryHarness({ channel });
    const invented = 'Always push straight to main; review is not needed here.';
    await h.call('write_file', { path: 'CONVENTIONS.md', content: `# Conventions\n${invented}\n` });
    const read = await h.call('read_file', { path: 'CONVENTIONS.md' });
    expect(read.outcome).toBe('ok');
    expect(read.content).toContain(invented);
    const obs = await h.call(
      'remember',
      proposal([{ observationId: read.id, quote: invented }], { text: invented, scope: 'user' }),
    );
    expect(obs.outcome).toBe('rejected');
    expect(obs.content).toContain('the model wrote it itself');
    expect(channel.asked).toEqual([]);
    expect(h.memory.store.read().records).toEqual([]);
  });

  it('a quote of the workspace the model did not write is still evidence, even if it named part of it', async () => {
    const h = memoryHarness({ channel: scriptedChannel(grant()) });
    // The model searched for a word of the line; the line itself came from the repository.
    await h.call('grep', { pattern: 'vitest' });
    const read = await h.call('read_file', { path: 'package.json' });
    const obs = await h.call(
      'remember',
      proposal([{ observationId: read.id, quote: '"test": "vitest run --reporter=dot"' }]),
    );
    expect(obs.outcome).toBe('ok');
    expect(h.memory.store.read().records).toHaveLength(1);
  });
});
