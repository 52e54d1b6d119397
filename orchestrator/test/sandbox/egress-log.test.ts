import { describe, expect, it } from 'vitest';
import { lineSplitter, parseEgressLine } from '../../src/sandbox/egress-log';

describe('parseEgressLine', () => {
  it('reads decisions and the start line', () => {
    expect(
      parseEgressLine(
        '{"event":"egress.allowed","host":"a.example","port":443,"phase":"setup","address":"203.0.113.1"}',
        'setup',
      ),
    ).toEqual({
      decision: { event: 'egress.allowed', host: 'a.example', port: 443, phase: 'setup', address: '203.0.113.1' },
    });
    expect(
      parseEgressLine('{"event":"egress.denied","host":"b","port":80,"phase":"agent","reason":"no"}', 'agent'),
    ).toEqual({
      decision: { event: 'egress.denied', host: 'b', port: 80, phase: 'agent', reason: 'no' },
    });
    expect(parseEgressLine('{"event":"egress.listening","port":3128,"phase":"setup"}', 'setup')).toEqual({
      listening: { event: 'egress.listening', port: 3128, phase: 'setup' },
    });
  });

  it.each([
    ['not json', /not JSON/],
    ['{"event":"egress.allowed","host":"a","port":443,"phase":"setup"}', /without its address/],
    ['{"event":"egress.denied","host":"a","port":443,"phase":"setup"}', /without a reason/],
    ['{"event":"egress.allowed","host":"a","port":443,"phase":"setup","address":"x","extra":1}', /not a decision/],
    ['{"event":"egress.allowed","host":"a","port":"443","phase":"setup","address":"x"}', /not a decision/],
    ['{"event":"egress.allowed","host":"a","port":70000,"phase":"setup","address":"x"}', /not a decision/],
    ['{"event":"egress.other","host":"a","port":1,"phase":"setup"}', /not a decision/],
    ['{"event":"egress.allowed","host":"a","port":443,"phase":"agent","address":"x"}', /phase agent from the setup/],
    ['[1]', /not a decision/],
    [`{"event":"egress.denied","host":"${'a'.repeat(5000)}","port":1,"phase":"setup","reason":"r"}`, /a line of/],
  ])('refuses %j', (line, why) => {
    const r = parseEgressLine(line, 'setup');
    expect('error' in r && r.error).toMatch(why);
  });
});

describe('lineSplitter', () => {
  it('joins lines across chunks and skips an over-long one', () => {
    const lines: string[] = [];
    const long: number[] = [];
    const feed = lineSplitter(
      (l) => lines.push(l),
      (n) => long.push(n),
    );
    feed(Buffer.from('ab'));
    feed(Buffer.from('c\nde'));
    feed(Buffer.from('x'.repeat(5000)));
    feed(Buffer.from('yy\nok\n'));
    expect(lines).toEqual(['abc', 'ok']);
    expect(long).toEqual([5004]);
  });
});
