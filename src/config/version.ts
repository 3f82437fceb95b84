import packageJson from '../../package.json' with { type: 'json' };

/** Quarry's version: the one in package.json, the only place it is written. */
export const QUARRY_VERSION: string = packageJson.version;
