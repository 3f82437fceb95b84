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

  it('keeps waiting through an abort for a reason it does not abandon for, and settles with the work', async () => {
    const controller = new AbortController();
    let finish: (value: string) => void = () => undefined;
    const work = new Promise<string>((resolve) => (finish = resolve));
    const raced = raceAbort(work, controller.signal, (reason) => reason === 'lost');
    controller.abort('stopping');
    finish('done');
    await expect(raced).resolves.toBe('done');
  });

  it('rejects at once when already aborted, and a later failure of the work is not unhandled', async () => {
    const controller = new AbortController();
    controller.abort('lost');
    const work = Promise.reject(new Error('refused'));
    await expect(raceAbort(work, controller.signal)).rejects.toBe('lost');
  });
});
