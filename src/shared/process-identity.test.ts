import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { machineClockMs, machineClockToWallMs, machineLeaseOver, thisProcess } from './process-identity.ts';

describe('leases on the machine clock', () => {
  afterEach(() => vi.useRealTimers());

  it('keeps a live holder whatever the wall clock says, and frees a dead one at once', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    await once(child, 'spawn');
    const inAMinute = machineClockMs() + 60_000;
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 2 * 3600_000);
    expect(machineLeaseOver(thisProcess.host, child.pid!, inAMinute)).toBe(false);
    vi.setSystemTime(Date.now() - 4 * 3600_000);
    expect(machineLeaseOver(thisProcess.host, child.pid!, inAMinute)).toBe(false);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(machineLeaseOver(thisProcess.host, child.pid!, inAMinute)).toBe(true);
  });

  it('ends a lease by its expiry on the machine clock, and one taken before the last boot at once', () => {
    expect(machineLeaseOver(thisProcess.host, process.pid, machineClockMs() - 1)).toBe(true);
    expect(machineLeaseOver(thisProcess.host, process.pid, machineClockMs() + 60_000)).toBe(false);
    const earlierBoot = thisProcess.host.replace(/\/[0-9a-f-]{36}/, '/00000000-0000-0000-0000-000000000000');
    expect(machineLeaseOver(earlierBoot, 1, machineClockMs() + 60_000)).toBe(thisProcess.host !== earlierBoot);
    expect(machineLeaseOver(null, null, null)).toBe(true);
  });

  it('judges an expiry an earlier release wrote on the wall clock by the wall clock', () => {
    expect(machineLeaseOver(thisProcess.host, process.pid, Date.now() + 60_000)).toBe(false);
    expect(machineLeaseOver(thisProcess.host, process.pid, Date.now() - 1)).toBe(true);
  });

  it('shows a machine-clock expiry as a wall-clock time', () => {
    const shown = machineClockToWallMs(machineClockMs() + 60_000);
    expect(Math.abs(shown - (Date.now() + 60_000))).toBeLessThan(1_000);
    expect(machineClockToWallMs(1_800_000_000_000)).toBe(1_800_000_000_000);
  });
});
