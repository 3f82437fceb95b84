/**
 * Bounds on waiting, for tests that must hold on a loaded machine. A test never asserts how fast
 * something is; it waits for a condition, and gives up only after a bound. Bounds are written as
 * what a quiet 2-core machine needs and multiplied here: by 10 unless `QUARRY_TEST_TIME_SCALE`
 * says otherwise (load 20 on 2 cores makes every process about ten times slower). A bound is
 * never a delay: a condition that holds early ends the wait early.
 */
const scale = Number(process.env.QUARRY_TEST_TIME_SCALE ?? 10);
if (!Number.isFinite(scale) || scale <= 0)
  throw new Error(`QUARRY_TEST_TIME_SCALE must be a positive number, not "${process.env.QUARRY_TEST_TIME_SCALE}"`);

/** The bound for something a quiet machine does within `quietMs`. */
export function within(quietMs: number): number {
  return Math.round(quietMs * scale);
}
