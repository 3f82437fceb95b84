/**
 * Where citation markers (`[3]`, `[1, 4]`) may stand in a report's Markdown: in its prose, never in
 * code (a fenced block or a code span: `argv[1]`) and never in a blockquote (a quoted passage is the
 * source's own text, and `[20]` there is the source's). One scanner for every reader of markers — the
 * writer's renumbering as the text streams, the claim check, the web UI — so they all agree. Pure:
 * the web UI imports it.
 */

/** What the scanner knows at a point of the text: carried from one piece of a stream to the next. */
export interface MarkerScan {
  /** Inside a fenced code block. */
  fence: boolean;
  /** Length of the backtick run that opened the code span we are in (0: none). */
  span: number;
  /** The next character starts a line. */
  lineStart: boolean;
  /** The current line is a blockquote line (`>`). */
  quote: boolean;
  /** The current line began with white space only so far (to see `>` or a fence after indentation). */
  leading: boolean;
}

export function newMarkerScan(): MarkerScan {
  return { fence: false, span: 0, lineStart: true, quote: false, leading: true };
}

/** A piece of text, and whether citation markers in it are read (prose) or left alone (code, quotes). */
export interface TextRun {
  text: string;
  prose: boolean;
}

/**
 * Splits `text` into runs of prose and of code or quotes, carrying `state` (updated in place) from
 * the text before it. A marker never straddles two runs: runs end at a backtick or a new line.
 */
export function proseRuns(text: string, state: MarkerScan): TextRun[] {
  const runs: TextRun[] = [];
  let current = '';
  let currentProse = isProse(state);
  const flush = () => {
    if (current) runs.push({ text: current, prose: currentProse });
    current = '';
  };
  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    if (char === '\n') {
      // A blank line ends a code span (spans never cross paragraphs).
      if (state.lineStart) state.span = 0;
      current += char;
      index += 1;
      state.lineStart = true;
      state.leading = true;
      state.quote = false;
      continue;
    }
    if (state.leading && (char === ' ' || char === '\t')) {
      current += char;
      index += 1;
      state.lineStart = false;
      continue;
    }
    if (state.leading) {
      state.leading = false;
      if (text.startsWith('```', index) && state.span === 0) {
        // A fence line: it and everything up to the closing fence is code.
        flush();
        state.fence = !state.fence;
        currentProse = false;
        const end = text.indexOf('\n', index);
        const stop = end === -1 ? text.length : end;
        current += text.slice(index, stop);
        index = stop;
        state.lineStart = false;
        continue;
      }
      if (char === '>' && !state.fence) state.quote = true;
    }
    state.lineStart = false;
    if (char === '`' && !state.fence && !state.quote) {
      let run = 1;
      while (text[index + run] === '`') run += 1;
      if (state.span === 0) {
        flush();
        state.span = run;
        current += text.slice(index, index + run);
        currentProse = false;
        index += run;
        continue;
      }
      if (run === state.span) {
        current += text.slice(index, index + run);
        index += run;
        state.span = 0;
        flush();
        currentProse = isProse(state);
        continue;
      }
      current += text.slice(index, index + run);
      index += run;
      continue;
    }
    const prose = isProse(state);
    if (prose !== currentProse) {
      flush();
      currentProse = prose;
    }
    current += char;
    index += 1;
  }
  flush();
  return runs;
}

function isProse(state: MarkerScan): boolean {
  return !state.fence && state.span === 0 && !state.quote;
}

/** `[3]`, `[1, 4]`, with the white space before it (so a removed marker leaves no gap). */
export const MARKER = /(\s*)\[(\d+(?:\s*,\s*\d+)*)\]/g;

/** The text with every marker in its prose replaced (code and quotes are left as they are). */
export function replaceMarkers(
  text: string,
  replace: (match: string, space: string, list: string) => string,
  state: MarkerScan = newMarkerScan(),
): string {
  return proseRuns(text, state)
    .map((run) => (run.prose ? run.text.replace(MARKER, replace) : run.text))
    .join('');
}

/** The numbers the markers of a text's prose cite, in order. */
export function markerNumbers(text: string): number[] {
  return proseRuns(text, newMarkerScan())
    .filter((run) => run.prose)
    .flatMap((run) => [...run.text.matchAll(MARKER)])
    .flatMap((match) => match[2]!.split(',').map((item) => Number(item.trim())));
}
