import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { raceAbort } from './concurrency.ts';

const never = () => new Promise<string>(() => undefined);

describe('raceAbort', () => {
  it('stops waiting for work that never answers once the signal aborts', async () => {
    const controller = new AbortController();
    const raced = raceAbort(never(), controller.signal);
    controller.abort(new Error('gone'));
    await expect(raced).rejects.toThrow('gone');
  });

  it('settles with the work when it answers first, leaving no listener behind', async () => {
    const controller = new AbortController();
    await expect(raceAbort(Promise.resolve('done'), controller.signal)).resolves.toBe('done');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects at once when already aborted, and a later failure of the work is not unhandled', async () => {
    const controller = new AbortController();
    controller.abort('lost');
    const work = Promise.reject(new Error('refused'));
    await expect(raceAbort(work, controller.signal)).rejects.toBe('lost');
  });
});
