import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  addToLibrary,
  discardIncoming,
  type IncomingFile,
  incomingFolder,
  LIBRARY_FILE_BYTES,
  listLibrary,
  removeFromLibrary,
} from '../../service/library.ts';
import { invalidInput, QuarryError } from '../../shared/errors.ts';
import type { AppEnv, ServerDependencies } from '../server-env.ts';
import { throwValidationError } from '../validation-hook.ts';
import { errorResponses, libraryDocumentSchema } from '../wire.ts';

const tags = ['library'];

/** Files one upload may carry. */
export const FILES_PER_REQUEST = 20;

const list = createRoute({
  method: 'get',
  path: '/',
  tags,
  summary: 'Your library: the documents you added (newest first)',
  responses: {
    200: {
      description: 'The documents',
      content: { 'application/json': { schema: z.object({ documents: z.array(libraryDocumentSchema) }) } },
    },
  },
});

const remove = createRoute({
  method: 'delete',
  path: '/{id}',
  tags,
  summary: 'Removes a document from your library, and its passages from the index',
  request: { params: z.object({ id: z.string().max(100) }) },
  responses: { 204: { description: 'Removed' }, 404: errorResponses[404] },
});

/**
 * The files of a multipart request, streamed to the user's incoming folder as they arrive (never
 * held in memory); a file past the size cap stops the request with 413 at once.
 */
async function receiveFiles(c: Context<AppEnv>, folder: string): Promise<IncomingFile[]> {
  const type = c.req.header('content-type') ?? '';
  const body = c.req.raw.body;
  if (!body) throw invalidInput('file', 'no file was sent (a multipart form field named "file")');
  const { Busboy } = await import('@fastify/busboy');
  const files: IncomingFile[] = [];
  const writes: Promise<void>[] = [];
  let refusal: Error | null = null;
  await new Promise<void>((resolve, reject) => {
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({
        headers: { 'content-type': type },
        limits: { files: FILES_PER_REQUEST, fileSize: LIBRARY_FILE_BYTES, fields: 10, fieldSize: 1024, parts: 40 },
      });
    } catch (error) {
      reject(invalidInput('content-type', (error as Error).message));
      return;
    }
    parser.on('file', (field, stream, name) => {
      if (field !== 'file' || refusal) {
        stream.resume();
        return;
      }
      const entry: IncomingFile = { name, path: join(folder, String(files.length)), size: 0 };
      files.push(entry);
      stream.on('data', (chunk: Buffer) => (entry.size += chunk.length));
      stream.on('limit', () => {
        refusal ??= new QuarryError(
          'PAYLOAD_TOO_LARGE',
          `${name} is larger than ${LIBRARY_FILE_BYTES / 1024 / 1024} MB.`,
          { details: { field: 'file' } },
        );
      });
      writes.push(pipeline(stream, createWriteStream(entry.path)));
    });
    parser.on('filesLimit', () => {
      refusal ??= invalidInput('file', `one request carries at most ${FILES_PER_REQUEST} files`);
    });
    parser.on('error', (error: Error) =>
      reject(invalidInput('file', `not a readable multipart body (${error.message})`)),
    );
    parser.on('finish', () => resolve());
    Readable.fromWeb(body as WebReadableStream<Uint8Array>)
      .on('error', reject)
      .pipe(parser);
  });
  await Promise.all(writes);
  if (refusal) throw refusal;
  return files;
}

/** `/api/documents`: the signed-in user's library (`service/library.ts`). */
export function libraryRoutes(dependencies: ServerDependencies) {
  const services = () => ({ corpus: dependencies.store, config: dependencies.config });
  const ownerOf = (c: Context<AppEnv>) => c.get('context').store.ownerId;
  const routes = new OpenAPIHono<AppEnv>({ defaultHook: throwValidationError })
    .openapi(list, async (c) => c.json({ documents: await listLibrary(services(), ownerOf(c)) }, 200))
    .openapi(remove, async (c) => {
      await removeFromLibrary(services(), ownerOf(c), c.req.valid('param').id);
      return c.body(null, 204);
    });
  // Streamed, so not through a validator (which would read the whole body first): described below.
  routes.post('/', async (c) => {
    // Refused before anything is written: a refused request leaves no trace.
    if (!/^multipart\/form-data\s*;/i.test(c.req.header('content-type') ?? ''))
      throw new QuarryError(
        'UNSUPPORTED_MEDIA_TYPE',
        'Send the files as multipart/form-data, each in a field named "file".',
        {
          details: { field: 'content-type' },
        },
      );
    const owner = ownerOf(c);
    const folder = await incomingFolder(dependencies.config, owner);
    try {
      const documents = await addToLibrary(services(), owner, await receiveFiles(c, folder));
      return c.json({ documents }, 201);
    } finally {
      await discardIncoming(dependencies.config, owner, folder);
    }
  });
  routes.openAPIRegistry.registerPath({
    method: 'post',
    path: '/',
    tags,
    summary:
      'Adds files to your library (multipart/form-data, fields named "file"; 25 MB a file, 20 a request): indexed at once, all or none',
    request: {
      body: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: z.object({ file: z.string().openapi({ type: 'string', format: 'binary' }) }),
          },
        },
      },
    },
    responses: {
      201: {
        description: 'Added and indexed',
        content: { 'application/json': { schema: z.object({ documents: z.array(libraryDocumentSchema) }) } },
      },
      400: errorResponses[400],
      413: errorResponses[413],
      415: { description: 'Not multipart, or a kind of file the library does not read' },
    },
  });
  return routes;
}
