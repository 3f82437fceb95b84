/** The step row's columns that make a `StepRecord` (`toStepRecord`). */
const STEP_FIELDS = [
  'run_id',
  'key',
  'seq',
  'phase',
  'kind',
  'status',
  'attempts',
  'input',
  'input_blob',
  'output',
  'output_blob',
  'error_code',
  'error_message',
  'usage',
  'started_at',
  'ended_at',
];

/** Blob bytes of a payload column of `table`'s row, looked up only for rows that have one. */
const blobOf = (table: string, column: string) =>
  `CASE WHEN ${table}.${column}_blob IS NULL THEN NULL ELSE (SELECT data FROM blobs WHERE hash = ${table}.${column}_blob) END`;

/** Blob bytes of a payload column of the step row `s`. */
export const blobData = (column: string) => blobOf('s', column);

// Named columns and scalar subqueries instead of `s.*` and LEFT JOINs: loading a 10,000-step
// journal on SQLite takes about half the time (bench/engine-resume.ts).
export const STEP_COLUMNS = STEP_FIELDS.map((field) => `s.${field}`).join(', ');
export const JOURNAL_SELECT = `SELECT ${STEP_COLUMNS}, ${blobData('input')} AS input_data, ${blobData('output')} AS output_data FROM steps s`;

/** The same columns as a write's RETURNING gives them back, from the `steps` row it wrote. */
export const STEP_RETURNING = `${STEP_FIELDS.join(', ')}, ${blobOf('steps', 'input')} AS input_data, ${blobOf('steps', 'output')} AS output_data`;
