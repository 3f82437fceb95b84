import type { Analyst, ClaimJudgment } from './analyst.ts';
import { assignCitations, renderSources } from './citations.ts';
import { isApproval } from './outline-review.ts';
import { citable } from './quotes.ts';
import { renumberDraft, streamed } from './report-stream.ts';
import type { ResearchContext } from './research-context.ts';
import type { ResearchSettings } from './research-settings.ts';
import { addPreference } from './research-state.ts';
import type { CitedSource, ClaimResult, Note, Outline, ResearchState } from './research-types.ts';
import { groundOutline } from './section-notes.ts';
import { type KeyScope, stepKeys } from './step-keys.ts';
import { type Ledger, think } from './think.ts';
import { checkClaims, claimsTrailer, type DraftClaim, settleClaims } from './verify-claims.ts';

/** Rounds of outline feedback a reviewer gets before the outline is written as it stands. */
const REVIEW_ROUNDS = 5;
/** Claims per entailment call of the fast model. */
const CLAIMS_PER_JUDGMENT = 40;

/** The reviewer-facing summary of a revision: what was applied, and what was not understood. */
export function feedbackReply(feedback: NonNullable<Outline['feedback']>): string {
  const parts: string[] = [];
  if (feedback.applied.length > 0) parts.push(`Done: ${feedback.applied.join('; ')}.`);
  if (feedback.notUnderstood.length > 0) parts.push(`Not done: ${feedback.notUnderstood.join('; ')}.`);
  return parts.join(' ');
}

/**
 * A heading as the report shows it: one line, no citation markers or note ids a model copied from
 * its prompt (a heading cites nothing).
 */
function headingText(title: string): string {
  return (
    title
      .replace(/\s*\[[^\]\n]*\]/g, '')
      .replace(/\s+/g, ' ')
      .trim() || 'Untitled'
  );
}

/** The title of a report nothing could be written for: the question, trimmed. */
function plainTitle(question: string): string {
  const clean = question
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/[?.!]+$/, '');
  return clean.length <= 80 ? clean : `${clean.slice(0, 80).replace(/\s+\S*$/, '')}…`;
}

/** What a report says when nothing it found answers: what it searched, so the reader can search otherwise. */
function nothingFound(state: ResearchState): string {
  const searched = state.topics.done.map((query) => `“${query}”`).join(', ');
  return `_The sources searched hold nothing that answers this question${searched ? `. Searched for: ${searched}` : ''}._`;
}

export interface WrittenReport {
  report: string;
  citations: CitedSource[];
  /** Claims that are not supported: unsupported and uncited ones. */
  flagged: ClaimResult[];
  claims: ClaimResult[];
}

interface WriteInput {
  question: string;
  settings: ResearchSettings;
  analyst: Analyst;
  ledger: Ledger;
  notes: Note[];
  state: ResearchState;
  scope: KeyScope;
  /** Post the report as the run's assistant message (default); a follow-up may answer in its own words instead. */
  post?: boolean;
}

/**
 * The outline, reviewed by a person when the settings ask; every section grounded in notes. Feedback
 * is kept in the research state as the user's preferences.
 */
async function reviewedOutline(ctx: ResearchContext, input: WriteInput, notes: Note[]): Promise<Outline> {
  const { question, settings, analyst, ledger, state, scope } = input;
  if (notes.length === 0) return { title: plainTitle(question), sections: [] };
  const grounded = (outline: Outline) => groundOutline(outline, notes, question).outline;
  let outline = await think(
    ctx,
    ledger,
    { key: stepKeys.outline(scope), phase: 'outline', finish: grounded },
    analyst.outline({ question, notes, settings, state }),
  );
  if (!settings.reviewOutline) return outline;
  for (let round = 1; round <= REVIEW_ROUNDS; round++) {
    // A revision says what it did with the feedback, and what it could not understand.
    const reply = outline.feedback ? feedbackReply(outline.feedback) : undefined;
    const answer = await ctx.waitForInput<string>({
      key: stepKeys.outlineReview(scope, round),
      phase: 'outline',
      payload: { outline, ...(reply ? { reply } : {}) },
    });
    if (isApproval(answer)) break;
    addPreference(state, String(answer));
    outline = await think(
      ctx,
      ledger,
      { key: stepKeys.outlineRevision(scope, round), phase: 'outline', finish: grounded },
      analyst.outline({ question, notes, settings, feedback: String(answer), previous: outline, state }),
    );
  }
  return outline;
}

/**
 * A model's entailment verdicts for the cited claims (journaled, in batches), when the analyst has
 * a model; an empty map otherwise, and the lexical check decides alone.
 */
export async function judgeClaims(
  ctx: ResearchContext,
  input: Pick<WriteInput, 'question' | 'settings' | 'analyst' | 'ledger' | 'scope'>,
  drafts: DraftClaim[],
): Promise<Map<number, ClaimJudgment>> {
  const cited = drafts
    .map((draft, index) => ({ index, claim: draft.claim.replace(/\s*\[[\d,\s]+\]/g, ''), passages: draft.passages }))
    .filter((entry) => drafts[entry.index]!.citations.length > 0);
  const judgments = new Map<number, ClaimJudgment>();
  for (let batch = 0; batch * CLAIMS_PER_JUDGMENT < cited.length; batch++) {
    const claims = cited.slice(batch * CLAIMS_PER_JUDGMENT, (batch + 1) * CLAIMS_PER_JUDGMENT);
    const call = input.analyst.judgeClaims({ question: input.question, claims, settings: input.settings });
    if (!call) break;
    const judged = await think(ctx, input.ledger, { key: stepKeys.judge(input.scope, batch), phase: 'verify' }, call);
    for (const judgment of judged) judgments.set(judgment.index, judgment);
  }
  return judgments;
}

/**
 * Outline (reviewed by a person when asked), sections written from their notes with one citation
 * map, then every sentence checked: cited and supported, cited but unsupported, or uncited. Only
 * notes whose quotes were found in their sources are ever cited; citations to anything else are
 * removed from the text and recorded with their claim.
 */
export async function writeReport(ctx: ResearchContext, input: WriteInput): Promise<WrittenReport> {
  const { question, settings, analyst, ledger, scope } = input;
  const notes = citable(input.notes);
  const outline = await reviewedOutline(ctx, input, notes);
  const notesById = new Map(notes.map((note) => [note.id, note]));
  const numbers = assignCitations(outline, notesById);
  const citationFor = Object.fromEntries(numbers);
  const urlByNumber = new Map([...numbers.entries()].map(([url, number]) => [number, url]));
  const known = (number: number) => urlByNumber.has(number);
  // Old number → number in the report, given at each source's first citation as sections are written.
  const order = new Map<number, number>();
  const drafts: { title: string; text: string; group?: string }[] = [];
  const pieces: string[] = [];
  for (const [index, section] of outline.sections.entries()) {
    const sectionNotes = section.noteIds.map((id) => notesById.get(id)).filter((note) => note !== undefined);
    if (sectionNotes.length === 0) continue;
    const title = headingText(section.title);
    // Sections of a group stand under its heading, written once before the first of them.
    const previousGroup = drafts.at(-1)?.group;
    const groupHeading = section.group && section.group !== previousGroup ? `## ${headingText(section.group)}\n\n` : '';
    const heading = section.group ? `${groupHeading}### ${title}` : `## ${title}`;
    const opening = `${pieces.length === 0 ? `# ${headingText(outline.title)}\n\n` : '\n'}${heading}\n\n`;
    const text = await think(
      ctx,
      ledger,
      { key: stepKeys.section(scope, index), phase: 'write' },
      streamed(
        ctx,
        { key: stepKeys.section(scope, index), message: input.post !== false, section: index, title },
        { opening, closing: '\n' },
        order,
        known,
        (onDelta) =>
          analyst.writeSection({
            question,
            section,
            notes: sectionNotes,
            citationFor,
            settings,
            findings: input.state.findings,
            onDelta,
          }),
      ),
    );
    pieces.push(`${opening}${renumberDraft(text, order, known)}\n`);
    drafts.push({ title, text, group: section.group });
  }
  // A report of quoted passages (no model wrote it) makes no claims of its own to check: each quote is
  // the source's text, cited under it. Word overlap between a quote and its own source checks nothing.
  const draftClaims = analyst.usesModel ? checkClaims(drafts, urlByNumber, notes) : [];
  const judgments = await judgeClaims(ctx, input, draftClaims);
  return ctx.step({ key: stepKeys.verify(scope), phase: 'verify' }, async () => {
    const titles = new Map(notes.map((note) => [note.url, note.title]));
    const sources = [...order.entries()].map(([old, number]) => {
      const url = urlByNumber.get(old)!;
      return { number, url, title: titles.get(url) ?? url };
    });
    const claims = settleClaims(draftClaims, judgments, order);
    const flagged = claims.filter((claim) => claim.verdict !== 'supported');
    // The sections as they streamed, then what only the whole report can say: its checks, its sources.
    const body = pieces.join('') || `# ${headingText(outline.title)}\n\n${nothingFound(input.state)}\n`;
    // A report of quoted passages that found none to quote has no passages to say anything about.
    const trailer = analyst.usesModel || sources.length > 0 ? `${claimsTrailer(analyst, claims)}\n` : '';
    const report = `${body}\n${trailer}${sources.length ? `\n${renderSources(sources)}` : ''}`;
    for (const source of sources)
      await ctx.session.upsertSource({
        url: source.url,
        citation: source.number,
        selected: 1,
      });
    for (const claim of flagged) await ctx.emit('claim-flag', claim);
    // Idempotent: a retry of this step after a crash must not post the report twice.
    const posted = await ctx.session.messages({ thisRun: true, phase: 'verify' });
    if (input.post !== false && !posted.some((message) => message.role === 'assistant')) {
      await ctx.session.appendMessage({
        role: 'assistant',
        content: report,
        phase: 'verify',
      });
    }
    return { report, citations: sources, flagged, claims };
  });
}
