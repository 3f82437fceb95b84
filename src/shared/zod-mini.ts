import { config } from 'zod/mini';
import english from 'zod/v4/locales/en.js';

/**
 * Zod's functional build, for the schemas on every command's path: the store's edge, the config file
 * and session files. Its schemas cost nothing to construct, and the CLI's build bundles this module
 * on its own with only the functions listed here, so `quarry ls` loads a sixth of zod instead of
 * all of it (scripts/build-cli.mjs). The classic build stays where its methods pay (the server's
 * wire types, model output schemas). Both report in English. A function missing here is a type error.
 */
config(english());

export {
  array,
  boolean,
  enum,
  extend,
  type infer,
  instanceof,
  int,
  maximum,
  maxLength,
  minimum,
  minLength,
  nullable,
  number,
  object,
  optional,
  pipe,
  record,
  refine,
  regex,
  strictObject,
  string,
  superRefine,
  transform,
  trim,
  unknown,
  url,
  type ZodMiniType,
} from 'zod/mini';
export type { $ZodError as ZodError } from 'zod/v4/core';
