import { QuarryError } from '../../shared/errors.ts';
import type { Admission, Session, SessionSnapshot, StepDetail } from '../store.ts';
import { admit } from './admission.ts';
import { importCheckpointsInTx } from './checkpoints.ts';
import { encodeJson, newId, putBlobInTx, storePayload } from './codec.ts';
import { readSession, type SqlContext } from './context.ts';
import { appendEventsInTx } from './events.ts';

/** Statuses an imported session can keep; a live one comes back `interrupted`. */
function importedStatus(status: string): string {
  return ['completed', 'failed', 'waiting', 'interrupted'].includes(status) ? status : 'interrupted';
}

export async function importSession(
  ctx: SqlContext,
  snapshot: SessionSnapshot,
  options: { ownerId: string; admission?: Pick<Admission, 'sessions'> },
): Promise<Session> {
  return ctx.driver.transaction(async (tx) => {
    await admit(ctx, tx, options);
    const source = snapshot.session;
    const runIds = snapshot.runs.map((run) => run.id);
    const taken =
      (await tx.query('SELECT id FROM sessions WHERE id = ?', [source.id])).length > 0 ||
      (runIds.length > 0 &&
        (await tx.query(`SELECT id FROM runs WHERE id IN (${runIds.map(() => '?').join(', ')})`, runIds)).length > 0);
    const sessionId = taken ? newId() : source.id;
    // A LangGraph thread keeps its thread id, or its graph could not find it: two of one name is refused.
    const externalId = source.externalId?.startsWith('langgraph:') ? source.externalId : null;
    if (
      externalId &&
      (await tx.query('SELECT id FROM sessions WHERE owner_id = ? AND external_id = ?', [options.ownerId, externalId]))
        .length > 0
    )
      throw new QuarryError(
        'CONFLICT',
        `This store already has LangGraph thread "${externalId.slice('langgraph:'.length)}"; delete it first to import this one.`,
        { details: { externalId } },
      );
    const runIdMap = new Map(snapshot.runs.map((run) => [run.id, taken ? newId() : run.id]));
    const mapRun = (id: string | null) => (id === null ? null : (runIdMap.get(id) ?? null));
    const current = [...snapshot.runs].sort((a, b) => b.number - a.number)[0];
    await tx.query(
      `INSERT INTO sessions (id, owner_id, external_id, title, question, status, settings, workflow_name, workflow_version, current_run_id, error_code, error_message,
         message_count, run_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${ctx.now})`,
      [
        sessionId,
        options.ownerId,
        externalId,
        source.title,
        source.question,
        importedStatus(source.status),
        encodeJson(source.settings),
        source.workflow.name,
        source.workflow.version,
        current ? mapRun(current.id) : null,
        source.error?.code ?? null,
        source.error?.message ?? null,
        Math.max(0, ...snapshot.messages.map((message) => message.seq)),
        snapshot.runs.length,
        source.createdAt,
      ],
    );
    for (const run of snapshot.runs) {
      const steps = snapshot.steps.filter((step) => step.runId === run.id);
      await tx.query(
        'INSERT INTO runs (id, session_id, number, kind, input, status, output, next_seq, created_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
          mapRun(run.id),
          sessionId,
          run.number,
          run.kind,
          encodeJson(run.input),
          run.status,
          encodeJson(run.output),
          Math.max(0, ...steps.map((step) => step.seq)),
          run.createdAt,
          run.endedAt,
        ],
      );
      for (const exported of steps) {
        const step = damagedRedone(exported);
        const input = await storePayload(tx, ctx.now, sessionId, step.input);
        const output = await storePayload(tx, ctx.now, sessionId, step.output);
        const prompt = step.prompt
          ? await putBlobInTx(tx, ctx.now, sessionId, Buffer.from(encodeJson(step.prompt)!, 'utf8'))
          : null;
        await tx.query(
          `INSERT INTO steps (run_id, session_id, key, seq, phase, kind, status, attempts, input, input_blob, output, output_blob, prompt_blob,
             error_code, error_message, usage, started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [
            mapRun(run.id),
            sessionId,
            step.key,
            step.seq,
            step.phase,
            step.kind,
            step.status,
            step.attempts,
            input.inline,
            input.blob,
            output.inline,
            output.blob,
            prompt,
            step.error?.code ?? null,
            step.error?.message ?? null,
            step.usage ? encodeJson(step.usage) : null,
            step.startedAt,
            step.endedAt,
          ],
        );
      }
    }
    for (const message of snapshot.messages) {
      await tx.query(
        'INSERT INTO messages (id, session_id, seq, role, content, run_id, phase, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [
          newId(),
          sessionId,
          message.seq,
          message.role,
          message.content,
          mapRun(message.runId),
          message.phase,
          message.createdAt,
        ],
      );
    }
    for (const item of snapshot.sources) {
      await tx.query(
        `INSERT INTO sources (id, session_id, url, title, content_hash, citation, times_considered, times_selected, metadata, run_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          newId(),
          sessionId,
          item.url,
          item.title,
          item.contentHash,
          item.citation,
          item.timesConsidered,
          item.timesSelected,
          encodeJson(item.metadata ?? {}),
          mapRun(item.runId),
          item.createdAt,
        ],
      );
    }
    if (current) {
      const liveSteps = snapshot.steps.filter((step) => step.runId === current.id).sort((a, b) => a.seq - b.seq);
      const completed = liveSteps.filter((step) => step.status === 'completed');
      await tx.query(
        'UPDATE sessions SET known_steps = ?, completed_steps = ?, progress_phase = ?, next_step = ? WHERE id = ?',
        [
          liveSteps.length,
          completed.length,
          completed.at(-1)?.phase ?? null,
          liveSteps.find((step) => step.status !== 'completed')?.key ?? null,
          sessionId,
        ],
      );
    }
    if (snapshot.checkpoints?.length) await importCheckpointsInTx(ctx, tx, sessionId, snapshot.checkpoints);
    await appendEventsInTx(ctx, tx, sessionId, [{ type: 'session-import', data: { originalId: source.id } }]);
    return readSession(ctx, tx, sessionId);
  });
}

/**
 * A completed step whose output the exporting store could not read back is imported as failed, so a
 * resume runs it again instead of replaying a value that is gone.
 */
function damagedRedone(step: StepDetail): StepDetail {
  if (step.status !== 'completed' || step.damage?.output === undefined) return step;
  return {
    ...step,
    status: 'failed',
    error: {
      code: 'STORE_CORRUPT',
      message: `Its output was damaged in the store it was exported from (${step.damage.output}).`,
    },
  };
}
