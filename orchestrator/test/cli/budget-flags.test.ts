import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseDuration, parseUsd } from '../../src/cli/option-parsers';

describe('--max-wall DURATION', () => {
  it.each([
    ['90s', 90_000],
    ['30m', 1_800_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['2500ms', 2500],
    [' 45S ', 45_000],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['30', '', 'm', '10 minutes', '5x', '-5m', '0s', '500ms', '8d', '30m garbage', '169h'])(
    'refuses %j, saying what a duration looks like',
    (text) => {
      expect(() => parseDuration(text)).toThrow(InvalidArgumentError);
      expect(() => parseDuration(text)).toThrow(/a duration with a unit, such as 90s, 30m, 2h/);
    },
  );
});

describe('--max-cost USD', () => {
  it.each([
    ['2', 2],
    ['0.50', 0.5],
    ['$5', 5],
  ])('%s is %d dollars', (text, usd) => expect(parseUsd(text)).toBe(usd));

  it.each(['0', '-1', 'five', '', 'Infinity', '1e999', '$'])('refuses %j', (text) => {
    expect(() => parseUsd(text)).toThrow(/a positive amount of US dollars/);
  });
});
