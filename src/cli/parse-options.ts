import { invalidInput } from '../shared/errors.ts';

/** A whole number within bounds, or `INVALID_INPUT` naming the flag. */
export function parseWholeNumber(
  value: string | undefined,
  flag: string,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max)
    throw invalidInput(flag, `must be a whole number from ${min} to ${max}, not "${value}"`);
  return number;
}

/** Commander's collector for repeatable options (`--docs a --docs b`). */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
