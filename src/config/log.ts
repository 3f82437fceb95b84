import { hostname } from 'node:os';
import pino from 'pino';
import { invalidInput } from '../shared/errors.ts';

/** Ids that say what a log line is about. Never document text, prompts or secrets. */
export interface LogFields {
  sessionId?: string;
  runId?: string;
  workerId?: string;
  /** The OpenTelemetry trace of the run, when tracing is on. */
  traceId?: string;
  /** How a run ended, and how long it took. */
  status?: string;
  durationMs?: number;
}

/** A line for the operator: what happened, the error if it is one, and what it is about. */
export type Log = (message: string, error?: unknown, fields?: LogFields) => void;

export const logFormats = ['text', 'json'] as const;

/**
 * The process's log on standard error: plain lines by default (a terminal), or with
 * `QUARRY_LOG_FORMAT=json` one JSON object per line (pino: `level`, `time`, `msg`, the ids, and
 * `err` with its stack), for a log collector.
 */
export function processLog(format = process.env.QUARRY_LOG_FORMAT ?? 'text'): Log {
  if (!(logFormats as readonly string[]).includes(format))
    throw invalidInput('QUARRY_LOG_FORMAT', `"${format}" is not one of ${logFormats.join(', ')}`);
  if (format === 'text') return (message, error) => console.error(message, ...(error === undefined ? [] : [error]));
  const logger = pino(
    {
      base: { pid: process.pid, hostname: hostname() },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    // Synchronous: the last lines before an exit are written, not lost in a buffer.
    pino.destination({ fd: 2, sync: true }),
  );
  return (message, error, fields = {}) => {
    if (error === undefined) logger.info(fields, message);
    else logger.error({ ...fields, err: error }, message);
  };
}
