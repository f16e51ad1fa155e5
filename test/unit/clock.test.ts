import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isoMs, isoTime, MAX_TIMER_MS, systemClock, timerMs } from '../../src/clock.js';

// vitest's fake timers act out Node's limit: a delay over 2^31 − 1 ms fires
// after 1 ms. So each test below fails on a clock that hands a long delay to
// one timer.

const DAY_MS = 24 * 60 * 60 * 1000;

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the system clock holds delays longer than one Node timer', () => {
  it('after(30 days) fires after 30 days, not at once', () => {
    const fire = vi.fn();
    systemClock.after(30 * DAY_MS, fire);
    vi.advanceTimersByTime(1);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(MAX_TIMER_MS);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(30 * DAY_MS - MAX_TIMER_MS - 2);
    expect(fire).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fire).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('timeout(60 days) aborts after 60 days with a TimeoutError; clear() stops it between two timers', () => {
    const long = systemClock.timeout(60 * DAY_MS);
    vi.advanceTimersByTime(59 * DAY_MS);
    expect(long.signal.aborted).toBe(false);
    vi.advanceTimersByTime(DAY_MS);
    expect(long.signal.aborted).toBe(true);
    expect((long.signal.reason as DOMException).name).toBe('TimeoutError');

    const cleared = systemClock.timeout(60 * DAY_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS + 10);
    cleared.clear();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60 * DAY_MS);
    expect(cleared.signal.aborted).toBe(false);
  });

  it('sleep(25 days) resolves after 25 days, and an abort ends it early with no timer left', async () => {
    let slept = false;
    void systemClock.sleep(25 * DAY_MS).then(() => (slept = true));
    await vi.advanceTimersByTimeAsync(24 * DAY_MS);
    expect(slept).toBe(false);
    await vi.advanceTimersByTimeAsync(DAY_MS);
    expect(slept).toBe(true);

    const controller = new AbortController();
    const sleeping = systemClock.sleep(25 * DAY_MS, controller.signal);
    await vi.advanceTimersByTimeAsync(MAX_TIMER_MS + 1);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
    expect(vi.getTimerCount()).toBe(0);
  });

  it("short delays are one timer, as before; an infinite delay never fires, NaN fires at once (as with Node's own timers)", () => {
    const fire = vi.fn();
    systemClock.after(5, fire);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(5);
    expect(fire).toHaveBeenCalledTimes(1);
    const never = vi.fn();
    systemClock.after(Infinity, never);
    const soon = vi.fn();
    systemClock.after(Number.NaN, soon);
    vi.advanceTimersByTime(1);
    expect(soon).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(100 * DAY_MS);
    expect(never).not.toHaveBeenCalled();
  });

  it('timerMs caps a timeout handed to a library at what one timer holds', () => {
    expect(timerMs(30 * DAY_MS)).toBe(MAX_TIMER_MS);
    expect(timerMs(1500)).toBe(1500);
    expect(timerMs(-3)).toBe(0);
  });
});

describe('isoTime', () => {
  it("formats as Date's toISOString does, whichever minute came before", () => {
    const lastFourDigitMs = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
    const edges = [0, 1, 9, 10, 99, 100, 999, 1000, 59_999, 60_000, 60_001, 3_599_999, 1_733_312_345_678, 1_733_312_345_678, 1_733_312_345_679, lastFourDigitMs];
    const sweep = Array.from({ length: 2000 }, (_, i) => 1_733_312_000_000 + i * 7_919);
    const anywhere = Array.from({ length: 2000 }, (_, i) => Math.floor(((i * 2_654_435_761) % 1_000_003) / 1_000_003 * lastFourDigitMs));
    for (const ms of [...edges, ...sweep, ...anywhere, ...sweep.reverse()]) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('leaves what has no four-digit year, a fraction of a millisecond or no time at all to Date', () => {
    for (const ms of [-1, -60_001, 1.5, 59_999.9, Date.UTC(10000, 0, 1), 8.64e15]) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
    expect(() => isoTime(NaN)).toThrow(RangeError);
  });
});

describe('isoMs', () => {
  it("reads a time as Date.parse does, whichever minute it read before", () => {
    const times = Array.from({ length: 3000 }, (_, i) => new Date(1_733_312_000_000 + i * 7_919).toISOString());
    for (const text of [...times, ...times.reverse()]) expect(isoMs(text), text).toBe(Date.parse(text));
  });

  it('gives what Date.parse gives for other shapes and for broken times, also right after a time of the same minute', () => {
    const minute = '2026-12-04T10:00:';
    const odd = ['05.000Z', '59.999Z', '60.000Z', '99.000Z', '5x.000Z', '05.0x0Z', '05.000z', '05.000+', '-5.000Z', '05:000Z', '05.000Z ', '05.00Z'];
    const others = ['2026-12-04T10:00:05Z', '2026-12-04T10:00:05.000+01:00', '2026-12-04T10:00:05+0100', '2026-12-04', 'not a time', '', '+012026-12-04T10:00:05.000Z'];
    for (const text of [...odd.map((tail) => minute + tail), ...others]) {
      isoMs(`${minute}00.000Z`);
      expect(isoMs(text), text).toBe(Date.parse(text));
      expect(isoMs(text), `${text} again`).toBe(Date.parse(text));
    }
  });
});
