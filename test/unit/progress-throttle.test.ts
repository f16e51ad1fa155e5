import { describe, expect, it } from 'vitest';
import { throttleProgress, type CallProgress } from '../../src/queue/progress-throttle.js';
import { FakeClock } from '../helpers/fake-clock.js';

describe('throttleProgress', () => {
  it('passes the first update at once, then the newest one per interval', async () => {
    const clock = new FakeClock('2026-01-15T10:00:00Z');
    const sent: CallProgress[] = [];
    const throttle = throttleProgress((progress) => sent.push(progress), clock, 250);
    throttle.push({ progress: 1 });
    expect(sent).toEqual([{ progress: 1 }]);
    // A chatty app: one notification a millisecond for a second.
    for (let ms = 2; ms <= 1000; ms++) {
      await clock.advance(1);
      throttle.push({ progress: ms, total: 1000 });
    }
    expect(sent.length).toBeLessThanOrEqual(5);
    expect(sent.map((progress) => progress.progress)).toEqual([1, 250, 500, 750]);
    // The last one arrives when its interval is over.
    await clock.advance(250);
    expect(sent.at(-1)).toEqual({ progress: 1000, total: 1000 });
  });

  it('sends nothing after stop, and an update after a quiet spell goes out at once', async () => {
    const clock = new FakeClock('2026-01-15T10:00:00Z');
    const sent: number[] = [];
    const throttle = throttleProgress(({ progress }) => sent.push(progress), clock, 250);
    throttle.push({ progress: 1 });
    throttle.push({ progress: 2 });
    await clock.advance(1000);
    expect(sent).toEqual([1, 2]);
    throttle.push({ progress: 3 });
    expect(sent).toEqual([1, 2, 3]);
    throttle.push({ progress: 4 });
    throttle.stop();
    await clock.advance(1000);
    expect(sent).toEqual([1, 2, 3]);
  });
});
