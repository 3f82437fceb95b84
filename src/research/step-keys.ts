/**
 * The research workflow's step vocabulary: its phases and the keys of its steps, built and parsed in
 * this one place. The workflow journals under these keys, and everything that reads a journal (the
 * web UI's progress, the CLI, the citation view, the legacy importer) parses them here, so renaming
 * a key is one change the compiler carries everywhere. Pure data and functions: the web UI imports it.
 */

/** The stages a research run goes through, as journaled on its steps and shown by every interface. */
export const researchPhases = ['plan', 'search', 'read', 'analyze', 'outline', 'write', 'verify'] as const;
export type ResearchPhase = (typeof researchPhases)[number];

export function isResearchPhase(value: unknown): value is ResearchPhase {
  return typeof value === 'string' && (researchPhases as readonly string[]).includes(value);
}

/** Where a run's steps live: the initial run's at the top, a follow-up's under `follow-up/`. */
export type KeyScope = '' | 'follow-up/';
export const FOLLOW_UP_SCOPE: KeyScope = 'follow-up/';

const iteration = (scope: KeyScope, number: number) => `${scope}iteration-${number}`;

/** Every key the research workflow journals under. */
export const stepKeys = {
  /** Clarifying questions (setting `clarify`): the analyst's questions, and the person's answer (an input step). */
  clarify: 'clarify',
  clarifyAnswer: 'clarify/answer',
  /** The session's title, from the analyst, and its application to the session row. */
  title: 'title',
  titleApply: 'title/apply',
  /** The first queries. */
  plan: 'plan',
  /** Research carried over from elsewhere (an imported session), turned into notes. */
  carried: 'carried',
  /** One search of an iteration (`index`: the query's place among the iteration's queries). */
  search: (scope: KeyScope, number: number, index: number) => `${iteration(scope, number)}/search-${index}`,
  /** One source read, and the notes taken from it. */
  read: (scope: KeyScope, number: number, index: number) => `${iteration(scope, number)}/read-${index}`,
  notes: (scope: KeyScope, number: number, index: number) => `${iteration(scope, number)}/notes-${index}`,
  /** The iteration's findings summary and its analysis (done, or the next queries). */
  findings: (scope: KeyScope, number: number) => `${iteration(scope, number)}/findings`,
  analyze: (scope: KeyScope, number: number) => `${iteration(scope, number)}/analyze`,
  outline: (scope: KeyScope) => `${scope}outline`,
  /** A person's review of the outline (an input step), and the revision it asked for. */
  outlineReview: (scope: KeyScope, round: number) => `${scope}outline-review-${round}`,
  outlineRevision: (scope: KeyScope, round: number) => `${scope}outline-revision-${round}`,
  section: (scope: KeyScope, index: number) => `${scope}write/section-${index}`,
  /** A batch of a model's verdicts on the report's claims, and the verified report itself. */
  judge: (scope: KeyScope, batch: number) => `${scope}verify/judge-${batch}`,
  verify: (scope: KeyScope) => `${scope}verify`,
  /** A follow-up's context, its assessment, its plan, and its answer (drafted, then published). */
  followUpContext: `${FOLLOW_UP_SCOPE}context`,
  followUpAssess: `${FOLLOW_UP_SCOPE}assess`,
  followUpPlan: `${FOLLOW_UP_SCOPE}plan`,
  followUpAnswer: `${FOLLOW_UP_SCOPE}answer`,
  followUpPublish: `${FOLLOW_UP_SCOPE}publish`,
  followUpAnswerPublish: `${FOLLOW_UP_SCOPE}answer/publish`,
} as const;

/** What a key of an iteration's step says. */
export interface IterationStepKey {
  scope: KeyScope;
  kind: 'search' | 'read' | 'notes' | 'findings' | 'analyze';
  iteration: number;
  /** The query's or source's place in its iteration (search, read, notes). */
  index?: number;
}

/** What a key of the writing steps says. */
export interface WritingStepKey {
  scope: KeyScope;
  kind: 'outline' | 'outline-review' | 'outline-revision' | 'section' | 'judge' | 'verify';
  /** The review round, the section's place, or the verdicts' batch. */
  index?: number;
}

export type ParsedStepKey = IterationStepKey | WritingStepKey;

const ITERATION_KEY =
  /^(follow-up\/)?iteration-(\d+)\/(search|read|notes)-(\d+)$|^(follow-up\/)?iteration-(\d+)\/(findings|analyze)$/;
const WRITING_KEY =
  /^(follow-up\/)?(?:(outline)|(outline-review)-(\d+)|(outline-revision)-(\d+)|write\/(section)-(\d+)|verify\/(judge)-(\d+)|(verify))$/;

/** The kind and numbers of an iteration's or the writing's step, from its key; null for any other key. */
export function parseStepKey(key: string): ParsedStepKey | null {
  const step = ITERATION_KEY.exec(key);
  if (step) {
    if (step[3]) {
      return {
        scope: step[1] ? FOLLOW_UP_SCOPE : '',
        kind: step[3] as IterationStepKey['kind'],
        iteration: Number(step[2]),
        index: Number(step[4]),
      };
    }
    return {
      scope: step[5] ? FOLLOW_UP_SCOPE : '',
      kind: step[7] as IterationStepKey['kind'],
      iteration: Number(step[6]),
    };
  }
  const writing = WRITING_KEY.exec(key);
  if (!writing) return null;
  const scope: KeyScope = writing[1] ? FOLLOW_UP_SCOPE : '';
  if (writing[2]) return { scope, kind: 'outline' };
  if (writing[3]) return { scope, kind: 'outline-review', index: Number(writing[4]) };
  if (writing[5]) return { scope, kind: 'outline-revision', index: Number(writing[6]) };
  if (writing[7]) return { scope, kind: 'section', index: Number(writing[8]) };
  if (writing[9]) return { scope, kind: 'judge', index: Number(writing[10]) };
  return { scope, kind: 'verify' };
}

/** True when the key is of an iteration's step of this kind (`search`, `read`…). */
export function isStepOf(key: string, kind: IterationStepKey['kind'] | WritingStepKey['kind']): boolean {
  return parseStepKey(key)?.kind === kind;
}
