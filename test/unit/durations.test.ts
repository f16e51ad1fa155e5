import { describe, expect, it } from 'vitest';
import { parseDuration, parseRate } from '../../src/config/durations.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['0s', 0],
    ['30s', 30_000],
    ['1.5s', 1_500],
    ['10m', 600_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['1m30s', 90_000],
    ['0.5ms', 1],
    ['30d', 2_592_000_000],
    ['1d12h', 129_600_000],
  ])('reads %s as %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['30', '', '5 minutes', '10 s', '1w', '-1s', '1.s', 's', '10M', ' 10s', '1h 30m'])('rejects %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('parseRate', () => {
  it.each([
    ['15/min', { count: 15, intervalMs: 60_000 }],
    ['2/s', { count: 2, intervalMs: 1_000 }],
    ['100/h', { count: 100, intervalMs: 3_600_000 }],
  ])('reads %s', (text, rate) => {
    expect(parseRate(text)).toEqual(rate);
  });

  it.each(['0/s', '15', '15/m', '15/minute', '1.5/s', '/s', '15 / min', '-1/s'])('rejects %j', (text) => {
    expect(parseRate(text)).toBeUndefined();
  });
});
