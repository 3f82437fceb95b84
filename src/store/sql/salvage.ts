import { isQuarryError } from '../../shared/errors.ts';
import type { StepDetail } from '../store.ts';
import type { SqlContext } from './context.ts';

type Row = Record<string, unknown>;

/** A step row found through the indexes, before its own page is read. */
interface Located {
  id: number;
  runId: string;
  seq: number;
  /** Its key, when the live-key index holds it (no key: a superseded step). */
  key: string | undefined;
}

/** True for the store's "this file is damaged" error. */
export function isDamage(error: unknown): boolean {
  return isQuarryError(error) && error.code === 'STORE_CORRUPT';
}

/**
 * The step rows of some runs, read one at a time from a SQLite file with damaged pages. A query
 * that meets a damaged page fails whole, so one bad page used to make a session impossible to show
 * or export, though the error told the user to export. The rows are found through the
 * `steps_by_run` index (pages of its own), each read by its id: a row that reads comes back as
 * `read` makes it; one that does not comes back as a failed step naming the damage (its key from
 * the live-key index, when that index still has it), so an export carries everything readable and a
 * resume redoes the rest. Null on PostgreSQL, whose damage is not a page a query can step around.
 */
export async function salvageSteps<T>(
  ctx: SqlContext,
  runIds: readonly string[],
  select: string,
  read: (row: Row) => T | null,
  options: { includeSuperseded?: boolean } = {},
): Promise<(T | StepDetail)[] | null> {
  if (ctx.driver.dialect.name !== 'sqlite') return null;
  const located: Located[] = [];
  for (const runId of runIds) {
    const rows = await ctx.driver.query<{ id: number; seq: number }>(
      'SELECT id, seq FROM steps INDEXED BY steps_by_run WHERE run_id = ? ORDER BY seq',
      [runId],
    );
    const keys = new Map<number, string>();
    try {
      const live = await ctx.driver.query<{ id: number; key: string }>(
        "SELECT id, key FROM steps INDEXED BY steps_live_key WHERE run_id = ? AND status <> 'superseded'",
        [runId],
      );
      for (const row of live) keys.set(Number(row.id), row.key);
    } catch (error) {
      if (!isDamage(error)) throw error;
    }
    for (const row of rows)
      located.push({ id: Number(row.id), runId, seq: Number(row.seq), key: keys.get(Number(row.id)) });
  }
  const steps: (T | StepDetail)[] = [];
  for (const place of located) {
    try {
      const [row] = await ctx.driver.query(`${select} WHERE s.id = ?`, [place.id]);
      const step = row ? read(row) : null;
      if (step !== null) steps.push(step);
    } catch (error) {
      if (!isDamage(error)) throw error;
      if (place.key === undefined && !options.includeSuperseded) continue;
      steps.push(damagedStep(place));
    }
  }
  return steps;
}

/** A step whose row cannot be read, as a failed step that says so (a resume redoes it). */
function damagedStep(place: Located): StepDetail {
  const key = place.key ?? `(unreadable step ${place.seq})`;
  return {
    runId: place.runId,
    key,
    seq: place.seq,
    phase: null,
    kind: 'task',
    status: 'failed',
    attempts: 0,
    input: undefined,
    output: undefined,
    error: {
      code: 'STORE_CORRUPT',
      message: `This step's row is on a damaged page of the store and cannot be read.${place.key ? ` Redo from it: quarry resume <session> --from ${place.key}` : ''}`,
    },
    usage: null,
    startedAt: 0,
    endedAt: null,
    prompt: null,
    damage: { row: 'it is on a damaged page of the store' },
  };
}
