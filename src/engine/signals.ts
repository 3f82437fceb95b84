/**
 * Signals end an activation without failing the run: the session is waiting, stopped, or owned by
 * another worker now. They travel as thrown values and as `AbortSignal` reasons, and are journaled
 * as what they are, never as errors.
 */
export class WaitForInputSignal extends Error {
  constructor(readonly requestKey: string) {
    super(`Waiting for input "${requestKey}".`);
    this.name = 'WaitForInputSignal';
  }
}

export class InterruptSignal extends Error {
  /** `handoff`: the worker is leaving gracefully; the session goes back to the queue, not to `interrupted`. */
  constructor(
    readonly reason: string,
    readonly handoff = false,
  ) {
    super(`Interrupted: ${reason}.`);
    this.name = 'InterruptSignal';
  }
}

export class LeaseLostSignal extends Error {
  constructor(readonly sessionId: string) {
    super(`Lost the lease on session "${sessionId}"; another worker owns it now.`);
    this.name = 'LeaseLostSignal';
  }
}

export type ActivationSignal = WaitForInputSignal | InterruptSignal | LeaseLostSignal;

export function isActivationSignal(value: unknown): value is ActivationSignal {
  return value instanceof WaitForInputSignal || value instanceof InterruptSignal || value instanceof LeaseLostSignal;
}

/** A stop, a hand-over, a wait for input or a lost lease: how a run ends on purpose, not an error. */
export function endsOnPurpose(error: unknown): boolean {
  return error instanceof InterruptSignal || error instanceof WaitForInputSignal || error instanceof LeaseLostSignal;
}
