/**
 * Pages that hold other pages' text: mirrors (the same page in another format, such as the AsciiDoc
 * or reStructuredText source shipped beside its HTML) and aggregates (every page of a manual in one,
 * as Node's all.html). A search that returned them would read and cite the same words twice, or the
 * aggregate instead of the page a reader wants. They are found at indexing from each document's
 * sketch: a sample of the hashes of its five-word runs (one in eight), so a page in another markup
 * still shares most of them with the page it mirrors.
 */

/** Words per shingle: long enough that common phrases rarely repeat across unrelated pages. */
const SHINGLE_WORDS = 5;
/** One hash in `SAMPLE` is kept: about 1 KB of sketch for a 20-page manual chapter. */
const SAMPLE = 8;
/** A hash found in more documents than this is boilerplate (a licence, a footer), not shared content. */
const COMMON = 20;
/** Fewer sampled shingles than this (about 150 words), and a document is too short to judge. */
const MIN_SAMPLES = 20;
/** Share of a document's sampled shingles another holds for the other to contain it. */
const CONTAINED = 0.6;
/** Share of a mirror's sampled shingles the page it mirrors must hold (in another format, a little less). */
const MIRRORED = 0.9;
/** Share of an aggregate's own sampled shingles that the pages it holds must account for. */
const MADE_OF = 0.7;
/**
 * Pages an aggregate holds at least: every page of a manual in one. A page that includes a few
 * shared fragments (Git's log page holds its option lists, each also a page) is still a page.
 */
const AGGREGATE_PARTS = 8;

/** FNV-1a, 32 bits: fast, and spreads five-word strings well enough for sampling. */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193);
  }
  return value >>> 0;
}

/**
 * A document's sketch: the sampled hashes of its five-word runs, sorted, as base64. Words are
 * letters and digits in lower case, so markup (`*bold*`, `--option::`, backticks) does not count.
 */
export function sketchOf(text: string): string {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const kept = new Set<number>();
  for (let index = 0; index + SHINGLE_WORDS <= words.length; index++) {
    const value = hash(words.slice(index, index + SHINGLE_WORDS).join(' '));
    if (value % SAMPLE === 0) kept.add(value);
  }
  const sorted = Uint32Array.from([...kept].sort((a, b) => a - b));
  return Buffer.from(sorted.buffer).toString('base64');
}

function decode(sketch: string): Uint32Array {
  const bytes = Buffer.from(sketch, 'base64');
  return new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

export interface SketchedDocument {
  path: string;
  kind: string;
  title: string;
  sketch: string;
}

/** Which of two mirrors readers should get: an HTML page over its source, then the shorter path. */
function preferred(a: SketchedDocument, b: SketchedDocument): SketchedDocument {
  if ((a.kind === 'html') !== (b.kind === 'html')) return a.kind === 'html' ? a : b;
  if (a.path.length !== b.path.length) return a.path.length < b.path.length ? a : b;
  return a.path < b.path ? a : b;
}

/**
 * For every document, what it duplicates: `AGGREGATE` for a document made mostly of eight or more
 * other pages of its kind; the path of the page it mirrors (two documents that each hold most of
 * the other; the preferred one stays); or null. Deterministic: the same documents give the same answer.
 */
export function findDuplicates(documents: readonly SketchedDocument[]): Map<string, string | null> {
  const samples = documents.map((document) => decode(document.sketch));
  const holders = new Map<number, number[]>();
  samples.forEach((values, index) => {
    for (const value of values) {
      const list = holders.get(value);
      if (list) list.push(index);
      else holders.set(value, [index]);
    }
  });
  // Shared sampled shingles per pair of documents, boilerplate left out.
  const shared = new Map<number, Map<number, number>>();
  for (const list of holders.values()) {
    if (list.length < 2 || list.length > COMMON) continue;
    for (const a of list) {
      const row = shared.get(a) ?? new Map<number, number>();
      shared.set(a, row);
      for (const b of list) if (a !== b) row.set(b, (row.get(b) ?? 0) + 1);
    }
  }
  const duplicateOf = new Map<string, string | null>(documents.map((document) => [document.path, null]));
  const contains = (outer: number, inner: number) =>
    samples[inner]!.length >= MIN_SAMPLES && (shared.get(inner)?.get(outer) ?? 0) / samples[inner]!.length >= CONTAINED;
  const share = (outer: number, inner: number) =>
    samples[inner]!.length >= MIN_SAMPLES ? (shared.get(inner)?.get(outer) ?? 0) / samples[inner]!.length : 0;
  documents.forEach((document, index) => {
    // Pages like it (an HTML page made of HTML pages): a page that includes fragments shipped as
    // sources of their own (Git's option lists) is a page, not an aggregate. A PDF is a print, never
    // a source: one made of the pages beside it is the same manual again, in a format less structured.
    const parts = [...(shared.get(index)?.keys() ?? [])].filter(
      (other) =>
        (documents[other]!.kind === document.kind || document.kind === 'pdf') &&
        contains(index, other) &&
        samples[index]!.length >= 1.5 * samples[other]!.length,
    );
    if (parts.length < AGGREGATE_PARTS) return;
    // Mostly made of those pages: a page that merely includes a shared list of options is not one.
    const covered = new Set(parts.flatMap((part) => [...samples[part]!]));
    const own = samples[index]!;
    if (own.filter((value) => covered.has(value)).length >= MADE_OF * own.length)
      duplicateOf.set(document.path, AGGREGATE);
  });
  documents.forEach((document, index) => {
    if (duplicateOf.get(document.path) !== null) return;
    // The same page: in another format (a source beside its HTML), nearly all of it in the other;
    // in the same format, all but nothing different, under the same title.
    const mirrors = [...(shared.get(index)?.keys() ?? [])]
      .filter((other) => duplicateOf.get(documents[other]!.path) !== AGGREGATE)
      .filter((other) => {
        const them = documents[other]!;
        if ((them.kind === 'html') !== (document.kind === 'html'))
          return share(other, index) >= CONTAINED && (share(index, other) >= CONTAINED || them.kind === 'html');
        return share(other, index) >= MIRRORED && share(index, other) >= MIRRORED && them.title === document.title;
      })
      .map((other) => documents[other]!);
    const best = mirrors.reduce((chosen, other) => preferred(chosen, other), document);
    if (best !== document) duplicateOf.set(document.path, best.path);
  });
  return duplicateOf;
}

/** What `findDuplicates` says of a document that holds most of several others. */
export const AGGREGATE = '*';
