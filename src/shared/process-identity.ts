import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

function quietly(read: () => string): string {
  try {
    return read().trim();
  } catch {
    return '';
  }
}

/** The kernel's id for this boot of the machine, or '' where the system does not say. */
const bootId = quietly(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));

/**
 * Names the space this process's id lives in: the host name, the kernel's boot id and the process
 * namespace (containers on one machine share the first two and differ in the third). Two processes
 * with the same `processHost` can tell whether each other's pid is alive.
 */
function processHost(): string {
  const namespace = quietly(() => readlinkSync('/proc/self/ns/pid'));
  return [hostname(), bootId, namespace].filter(Boolean).join('/');
}

/** This process, as its leases record it. */
export const thisProcess = { host: processHost(), pid: process.pid };

/** True while a process with this id exists on this machine (one we may not signal still exists). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when a lease's holder is known to be dead: it ran in this process space, is not this
 * process, and no longer exists. Anything unknown (another machine, no record) is not dead.
 */
export function holderIsDead(lease: { host: string | null; pid: number | null } | null): boolean {
  if (!lease?.host || lease.pid === null) return false;
  return lease.host === thisProcess.host && lease.pid !== thisProcess.pid && !isProcessAlive(lease.pid);
}

/** Times at or past this (2001-09-09) are wall-clock times; machine-clock times are far smaller. */
const WALL_CLOCK_FLOOR_MS = 1e12;

/**
 * Milliseconds on a clock that every process of this boot of the machine reads alike and that no
 * change of the wall clock moves (CLOCK_MONOTONIC, counted from boot); where the boot cannot be
 * named, the wall clock.
 */
export function machineClockMs(): number {
  return bootId ? Math.floor(Number(process.hrtime.bigint() / 1_000_000n)) : Date.now();
}

/** A time `machineClockMs` gave, as wall-clock milliseconds since the epoch (for people to read). */
export function machineClockToWallMs(time: number): number {
  return time >= WALL_CLOCK_FLOOR_MS ? time : Date.now() + (time - machineClockMs());
}

/**
 * Whether a lease timed on the machine clock is over, as any process of this machine judges it. A
 * holder in this process space that no longer exists is gone at once; a lease taken before the
 * machine last booted is over (its holder went with that boot); otherwise the expiry decides, on the
 * machine clock, so no process's wall clock, however wrong or however it jumps, moves the outcome.
 * Expiries written on the wall clock (by an earlier release) are judged on the wall clock.
 */
export function machineLeaseOver(host: string | null, pid: number | null, expiresAt: number | null): boolean {
  if (expiresAt === null) return true;
  if (expiresAt >= WALL_CLOCK_FLOOR_MS) return expiresAt < Date.now();
  if (host !== null && !host.split('/').includes(bootId)) return true;
  if (holderIsDead({ host, pid })) return true;
  return expiresAt < machineClockMs();
}
