/** The default of an exhaustive `switch`: a member added to the union fails to compile here. */
export function unreachable(value: never): never {
  throw new Error(`Unexpected value: ${JSON.stringify(value)}`);
}
