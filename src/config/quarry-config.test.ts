import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from './quarry-config.ts';

const resolve = (env: Record<string, string>) =>
  resolveConfig({ env: { QUARRY_HOME: mkdtempSync(join(tmpdir(), 'quarry-config-')), ...env } });

describe('QUARRY_CLARIFY', () => {
  it('reads on and off words in any case, and is off when unset or empty', () => {
    for (const on of ['1', 'true', 'YES', 'on']) expect(resolve({ QUARRY_CLARIFY: on }).clarify).toBe(true);
    for (const off of ['0', 'False', 'no', 'off', '']) expect(resolve({ QUARRY_CLARIFY: off }).clarify).toBe(false);
    expect(resolve({}).clarify).toBe(false);
  });

  it('refuses a value that is neither, naming the variable', () => {
    expect(() => resolve({ QUARRY_CLARIFY: 'sometimes' })).toThrow(/QUARRY_CLARIFY.*"sometimes" is neither on/);
  });
});

describe('QUARRY_LLM_STRUCTURED_OUTPUTS', () => {
  it('reads the same on and off words as every switch (issue 43: "no" and "off" left it on)', () => {
    const structured = (value: string) =>
      resolve({ QUARRY_LLM_STRUCTURED_OUTPUTS: value }).providers.openaiCompatible.structuredOutputs;
    for (const off of ['0', 'false', 'no', 'OFF']) expect(structured(off)).toBe(false);
    for (const on of ['1', 'true', 'yes', 'on']) expect(structured(on)).toBe(true);
    expect(resolve({}).providers.openaiCompatible.structuredOutputs).toBe(true);
    expect(() => structured('maybe')).toThrow(/QUARRY_LLM_STRUCTURED_OUTPUTS/);
  });
});
