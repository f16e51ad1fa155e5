import { describe, expect, it } from 'vitest';
import { Slots } from '../../src/scheduler/slots.js';

function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('Slots', () => {
  it('runs at most `limit` tasks at once, the waiting ones in the order they came', async () => {
    const slots = new Slots(2);
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((gate, index) => slots.run(async () => (started.push(index), gate.promise)));
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    gates[1]!.resolve();
    await runs[1];
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.resolve();
    gates[2]!.resolve();
    gates[3]!.resolve();
    await Promise.all(runs);
    expect(started).toEqual([0, 1, 2, 3]);
  });

  it('frees the slot of a task that failed, and passes the failure on', async () => {
    const slots = new Slots(1);
    const failing = slots.run(async () => {
      throw new Error('boom');
    });
    const next = slots.run(async () => 'ran');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ran');
  });

  it('works through a long line in order, one slot at a time', async () => {
    const slots = new Slots(1);
    const order: number[] = [];
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 5000 }, (_, index) =>
        slots.run(async () => {
          most = Math.max(most, ++running);
          order.push(index);
          await Promise.resolve();
          running--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order).toEqual(Array.from({ length: 5000 }, (_, index) => index));
  });
});
