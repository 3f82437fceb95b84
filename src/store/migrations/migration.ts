/**
 * A versioned schema change. Scripts are written once for every backend; `{{bigint}}`, `{{bytes}}`
 * and `{{serial}}` are replaced by each dialect's type (see `run-migrations.ts`).
 */
export interface Migration {
  /** 1, 2, 3…; applied in order, each once. */
  version: number;
  name: string;
  script: string;
  /** Extra statements for one backend only (full-text indexes differ), run after `script`. */
  dialects?: { sqlite?: string; postgres?: string };
}

/** Per-migration outcome, so a failure names the migration instead of throwing halfway. */
export interface MigrationResult {
  version: number;
  name: string;
  status: 'applied' | 'already-applied' | 'failed';
  error?: string;
}
