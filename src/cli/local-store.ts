/**
 * What every command that opens the store loads, as one lazily imported piece: one dynamic import
 * lets Node fetch the whole graph at once, where three in a row (config, then store, then services)
 * cost `quarry ls` about 8 ms of waiting. `quarry --help` loads none of it.
 */
export { resolveConfig } from '../config/quarry-config.ts';
export { localQueryContext } from '../service/local-query-context.ts';
export { openStore } from '../store/open-store.ts';
