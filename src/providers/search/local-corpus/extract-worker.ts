import { parentPort } from 'node:worker_threads';
import type { DocumentKind } from '../../extract/extracted-document.ts';
import { readDocument } from './read-document.ts';

/** A worker thread of the extract pool: reads one file's bytes into passages per message. */
parentPort?.on('message', async (message: { id: number; bytes: Uint8Array; kind: DocumentKind; path: string }) => {
  try {
    const document = await readDocument(message.bytes, message.kind, message.path);
    parentPort!.postMessage({ id: message.id, document });
  } catch (error) {
    parentPort!.postMessage({ id: message.id, error: (error as Error).message || String(error) });
  }
});
