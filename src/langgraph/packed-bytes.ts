import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** Values at least this large are stored deflated (when that makes them smaller). */
const DEFLATE_FROM_BYTES = 1024;
const DEFLATED = 'deflate:';

/** Serialized bytes as stored: deflated when that pays (the type says so). */
export function pack([type, bytes]: [string, Uint8Array]): [string, Uint8Array] {
  if (bytes.byteLength < DEFLATE_FROM_BYTES) return [type, bytes];
  const deflated = deflateRawSync(bytes, { level: 1 });
  return deflated.byteLength < bytes.byteLength * 0.9 ? [`${DEFLATED}${type}`, deflated] : [type, bytes];
}

/** Stored bytes as they were serialized. */
export function unpack(type: string, bytes: Uint8Array): [string, Uint8Array] {
  return type.startsWith(DEFLATED) ? [type.slice(DEFLATED.length), inflateRawSync(bytes)] : [type, bytes];
}
