/** Fields stored as JSON text (where a NUL is escaped, harmless); every other string goes to a text column. */
const jsonFields = new Set([
  'input',
  'output',
  'data',
  'value',
  'payload',
  'runOutput',
  'settings',
  'metadata',
  'usage',
]);

/**
 * The path of a string holding a NUL character, or null. PostgreSQL text cannot store one; refusing
 * it here makes both databases answer the same clear `INVALID_INPUT` instead of a driver error.
 */
export function findNul(value: unknown, path: string, depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (depth > 4 || value === null || typeof value !== 'object' || value instanceof Uint8Array) return null;
  for (const [key, item] of Object.entries(value)) {
    if (jsonFields.has(key)) continue;
    const found = findNul(item, Array.isArray(value) ? `${path}[${key}]` : key, depth + 1);
    if (found) return found;
  }
  return null;
}
