import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

function quietly(read: () => string): string {
  try {
    return read().trim();
  } catch {
    return '';
  }
}

/**
 * Names the space this process's id lives in: the host name, the kernel's boot id and the process
 * namespace (containers on one machine share the first two and differ in the third). Two processes
 * with the same `processHost` can tell whether each other's pid is alive.
 */
function processHost(): string {
  const boot = quietly(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'));
  const namespace = quietly(() => readlinkSync('/proc/self/ns/pid'));
  return [hostname(), boot, namespace].filter(Boolean).join('/');
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
