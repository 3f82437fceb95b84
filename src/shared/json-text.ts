import { invalidInput } from './errors.ts';

/** How deep any JSON Quarry accepts may nest; deeper text is refused before it is parsed. */
export const MAX_JSON_DEPTH = 100;

/** The deepest nesting of arrays and objects in JSON text (strings skipped), without parsing it. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c)
        index++; // a backslash escapes the next character
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (char === 0x7d || char === 0x5d) depth--;
  }
  return deepest;
}

/**
 * Parses JSON text that came from outside: nesting deeper than `MAX_JSON_DEPTH` and malformed text
 * are `INVALID_INPUT` naming `field`, so nothing downstream can overflow its stack on it.
 */
export function parseJsonText(text: string, field: string, hint = ''): unknown {
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw invalidInput(field, `nests deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalidInput(field, `is not valid JSON (${(error as Error).message})${hint}`);
  }
}
