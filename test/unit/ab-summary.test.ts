import { describe, expect, it } from 'vitest';
import { formatSummary, summarizePairs } from '../../bench/lib/ab-summary.mjs';

// bench/ab.mjs's summary: each build's spread over its turns, and in how many
// pairs the second build did better (higher runner/raw, lower CPU).

const pairs = [
  { a: { ratio: 0.7, overheadUsPerCall: 110, cpuUsPerCall: 250 }, b: { ratio: 0.75, overheadUsPerCall: 90, cpuUsPerCall: 230 } },
  { a: { ratio: 0.68, overheadUsPerCall: 120, cpuUsPerCall: 260 }, b: { ratio: 0.66, overheadUsPerCall: 130, cpuUsPerCall: 240 } },
  { a: { ratio: 0.72, overheadUsPerCall: 100, cpuUsPerCall: 240 }, b: { ratio: 0.8, overheadUsPerCall: 70, cpuUsPerCall: 245 } },
];

describe('summarizePairs', () => {
  it('gives each build its median, least and most, and counts the pairs B did better in', () => {
    expect(summarizePairs(pairs)).toEqual({
      pairs: 3,
      a: { ratio: { median: 0.7, min: 0.68, max: 0.72 }, overheadUsPerCall: { median: 110, min: 100, max: 120 }, cpuUsPerCall: { median: 250, min: 240, max: 260 } },
      b: { ratio: { median: 0.75, min: 0.66, max: 0.8 }, overheadUsPerCall: { median: 90, min: 70, max: 130 }, cpuUsPerCall: { median: 240, min: 230, max: 245 } },
      bRatioHigher: 2,
      bCpuLower: 2,
    });
  });

  it('counts a tie for neither build', () => {
    const same = { ratio: 0.7, overheadUsPerCall: 100, cpuUsPerCall: 250 };
    const tie = [{ a: same, b: { ...same } }];
    expect(summarizePairs(tie)).toMatchObject({ bRatioHigher: 0, bCpuLower: 0 });
  });
});

describe('formatSummary', () => {
  it('names both builds and says how many pairs B won', () => {
    const lines = formatSummary(summarizePairs(pairs), { a: '/tmp/a', b: '/tmp/b' });
    expect(lines[0]).toBe('A /tmp/a   runner/raw 0.700 (0.680-0.720)   overhead per call 110.0 us (100.0-120.0)   CPU per call 250.0 us (240.0-260.0)');
    expect(lines[1]).toBe('B /tmp/b   runner/raw 0.750 (0.660-0.800)   overhead per call 90.0 us (70.0-130.0)   CPU per call 240.0 us (230.0-245.0)');
    expect(lines[2]).toBe('B ahead in 2 of 3 pairs on runner/raw, lower CPU in 2 of 3');
  });
});
