import { describe, expect, it } from 'vitest';
import { followAbort, giveBackController, takeController } from '../../src/scheduler/deadline.js';

describe('takeController / giveBackController', () => {
  it('hands out again a controller given back unaborted, with nobody listening', () => {
    const first = takeController();
    const listener = () => {};
    first.signal.addEventListener('abort', listener, { once: true });
    first.signal.removeEventListener('abort', listener);
    giveBackController(first);
    const second = takeController();
    expect(second).toBe(first);
    expect(second.signal.aborted).toBe(false);
    giveBackController(second);
  });

  it('never hands out a controller whose signal aborted', () => {
    const controller = takeController();
    controller.abort(new Error('stop'));
    giveBackController(controller);
    const next = takeController();
    expect(next).not.toBe(controller);
    expect(next.signal.aborted).toBe(false);
  });

  it('never hands out a controller someone still listens to', () => {
    const controller = takeController();
    let heard = 0;
    controller.signal.addEventListener('abort', () => heard++);
    giveBackController(controller);
    const next = takeController();
    expect(next).not.toBe(controller);
    next.abort(new Error('the next call stops'));
    expect(heard).toBe(0);
  });

  it('keeps a bounded number of idle controllers', () => {
    const taken = Array.from({ length: 2000 }, () => takeController());
    for (const controller of taken) giveBackController(controller);
    const again = new Set(Array.from({ length: 2000 }, () => takeController()));
    const reused = taken.filter((controller) => again.has(controller)).length;
    expect(reused).toBeGreaterThan(0);
    expect(reused).toBeLessThanOrEqual(512);
  });
});

describe('followAbort', () => {
  it('calls every follower once with the reason, and not one that stopped following', () => {
    const run = new AbortController();
    const heard: unknown[] = [];
    followAbort(run.signal, (reason) => heard.push(['a', reason]));
    const stop = followAbort(run.signal, (reason) => heard.push(['b', reason]));
    stop();
    run.abort('cancelled');
    expect(heard).toEqual([['a', 'cancelled']]);
    const late: unknown[] = [];
    followAbort(run.signal, (reason) => late.push(reason));
    expect(late).toEqual(['cancelled']);
  });
});
