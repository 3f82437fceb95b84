import { z } from '@hono/zod-openapi';
import { errorCodes } from '../shared/errors.ts';
import { sessionStatuses, stepKinds } from '../store/store.ts';

/**
 * The HTTP API's wire types, defined once as zod schemas: they validate requests, type the route
 * handlers' responses, generate the OpenAPI document, and give the web UI its types (through
 * Hono's typed client over the same routes).
 */

const iso = z.string().openapi({ format: 'date-time' });
export const noNul = (schema: z.ZodString) =>
  schema.refine((text) => !text.includes('\u0000'), 'must not contain NUL characters');

export const sessionIdSchema = noNul(z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'is not a session id'));
export const idParams = z.object({ id: sessionIdSchema.openapi({ param: { name: 'id', in: 'path' } }) });

// ---------------------------------------------------------------------------------------------
// Errors

export const errorBodySchema = z
  .object({
    error: z.object({ code: z.enum(errorCodes), message: z.string(), field: z.string().optional() }),
  })
  .openapi('Error');

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: errorBodySchema } },
});

/** The error answers every route may give, by status. */
export const errorResponses = {
  400: errorResponse('Invalid input: `INVALID_INPUT`, naming the field'),
  401: errorResponse('No valid token (`UNAUTHORIZED`)'),
  403: errorResponse('Not allowed (`FORBIDDEN`)'),
  404: errorResponse('Not found, or another user’s'),
  409: errorResponse('Not in a state that allows it'),
  413: errorResponse('Too large (`PAYLOAD_TOO_LARGE`)'),
  415: errorResponse('State changes need `Content-Type: application/json`'),
  429: errorResponse('Over a per-user limit (`RATE_LIMITED`)'),
  503: errorResponse('The store is unavailable; retry'),
} as const;

// ---------------------------------------------------------------------------------------------
// Sessions

export const progressSchema = z.object({
  phase: z.string().nullable(),
  completedSteps: z.number().int(),
  knownSteps: z.number().int(),
  resumePoint: z.string().nullable(),
});

export const sessionSummarySchema = z
  .object({
    id: z.string(),
    title: z.string(),
    question: z.string(),
    status: z.enum(sessionStatuses),
    createdAt: iso,
    updatedAt: iso,
    progress: progressSchema,
    /** The session this one was forked from, when it is a fork. */
    forkedFrom: z.string().nullable(),
  })
  .openapi('SessionSummary');

/** A source as a text cites it: `[number]`. */
const citedSourceSchema = z.object({ number: z.number().int(), url: z.string(), title: z.string() });

export const messageSchema = z
  .object({
    id: z.string(),
    seq: z.number().int(),
    role: z.enum(['user', 'assistant', 'system']),
    content: z.string(),
    runId: z.string().nullable(),
    phase: z.string().nullable(),
    createdAt: iso,
    reportVersion: z.number().int().optional().openapi({
      description:
        'In a session’s detail: this answer is that report version (`content` is then empty, so a long report is not sent twice; the text is `report.latest` or `GET /api/sessions/:id/reports/{version}`). `GET /api/sessions/:id/messages` always carries the text.',
    }),
    citations: z.array(citedSourceSchema).optional().openapi({
      description:
        'In a session’s detail, on an answer that is not a report version: what its own `[n]` point to (an answer numbers its sources apart from any report version). `GET /api/sessions/:id/citations/{n}?answer=<message id>` opens one.',
    }),
  })
  .openapi('Message');

export const sourceSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    title: z.string(),
    citation: z.number().int().nullable(),
    timesConsidered: z.number().int(),
    timesSelected: z.number().int(),
    metadata: z.record(z.string(), z.unknown()),
    runId: z.string().nullable(),
    createdAt: iso,
  })
  .openapi('Source');

export const claimSchema = z
  .object({
    section: z.string(),
    claim: z.string(),
    citations: z.array(z.number().int()),
    verdict: z.enum(['supported', 'unsupported', 'uncited']),
    reason: z.string(),
    /** `[n]` markers that named no source of the report: removed from its text, recorded here. */
    unknownCitations: z.array(z.number().int()).optional(),
  })
  .openapi('Claim');

export const researchStateSchema = z
  .object({
    aspects: z.object({ covered: z.array(z.string()), open: z.array(z.string()) }),
    topics: z.object({ done: z.array(z.string()), irrelevant: z.array(z.string()) }),
    preferences: z.array(z.string()),
    findings: z.string(),
    tokensPerSource: z.record(z.string(), z.number()),
    /** True when the counts are estimates (four characters a token): no model read the sources. */
    tokensEstimated: z.boolean(),
  })
  .openapi('ResearchState');

/** A report version as a session's detail lists it: its text is `report.latest` or `GET …/reports/{version}`. */
export const reportVersionSchema = z.object({
  version: z.number().int(),
  runId: z.string(),
  createdAt: iso,
  question: z.string().openapi({
    description:
      'What the run that wrote this version set out to answer: the session’s question, or the follow-up question it researched further.',
  }),
  kind: z.string().openapi({ description: 'How that run started: `initial`, `follow-up`, `feedback`…' }),
  claims: z.array(claimSchema),
  /** What this version's `[n]` point to; numbers differ between versions. */
  citations: z.array(citedSourceSchema),
});

/** One report version with its text. */
export const reportSchema = reportVersionSchema.extend({ report: z.string() }).openapi('Report');

export const reportParams = idParams.extend({
  version: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .openapi({ param: { name: 'version', in: 'path' } }),
});

export const errorInfoSchema = z.object({ code: z.enum(errorCodes), message: z.string() });

export const sessionDetailSchema = sessionSummarySchema
  .extend({
    settings: z.record(z.string(), z.unknown()),
    workflow: z.object({ name: z.string(), version: z.number().int() }),
    error: errorInfoSchema.nullable(),
    resumePoint: z.object({
      nextStep: z.string().nullable(),
      lastCompletedPhase: z.string().nullable(),
      completedSteps: z.number().int(),
      knownSteps: z.number().int(),
    }),
    pendingInput: z.object({ key: z.string(), payload: z.unknown() }).nullable(),
    messages: z.array(messageSchema),
    runs: z.array(
      z.object({
        id: z.string(),
        number: z.number().int(),
        kind: z.string(),
        status: z.enum(['open', 'completed', 'failed']),
        createdAt: iso,
        endedAt: iso.nullable(),
      }),
    ),
    report: z.object({ latest: z.string().nullable(), versions: z.array(reportVersionSchema) }),
    sources: z.array(sourceSchema),
    /** Sessions forked from this one. */
    forks: z.array(z.object({ id: z.string(), title: z.string(), createdAt: iso })),
    /** What the research keeps across runs: aspects covered and open, preferences, tokens per source. */
    researchState: researchStateSchema.nullable(),
    /** Summed over every run (outline reviews, follow-ups and rewound steps included). */
    ledger: z
      .object({
        inputTokens: z.number().int(),
        outputTokens: z.number().int(),
        costUsd: z.number(),
        searches: z.number().int(),
        sourcesRead: z.number().int(),
      })
      .openapi('Ledger'),
  })
  .openapi('SessionDetail');

export const shareLinkSchema = z
  .object({
    /** The link to give readers: the server's public URL (or the request's origin) and the path. */
    url: z.string(),
    path: z.string(),
    sharedAt: iso,
  })
  .openapi('ShareLink');

export const shareStateSchema = z.object({ shared: z.boolean(), sharedAt: iso.nullable() }).openapi('ShareState');

export const sessionPageSchema = z.object({
  sessions: z.array(sessionSummarySchema),
  nextCursor: z.string().nullable(),
});

export const usageSchema = z
  .object({
    model: z.string().optional(),
    inputTokens: z.number().optional(),
    outputTokens: z.number().optional(),
    totalTokens: z.number().optional(),
    costUsd: z.number().optional(),
    latencyMs: z.number().optional(),
  })
  .nullable();

export const promptSchema = z.object({ model: z.string().optional(), system: z.string().optional(), user: z.string() });

export const stepSchema = z
  .object({
    runId: z.string(),
    key: z.string(),
    seq: z.number().int(),
    phase: z.string().nullable(),
    kind: z.enum(stepKinds),
    status: z.enum(['running', 'completed', 'failed', 'superseded']),
    attempts: z.number().int(),
    startedAt: iso,
    endedAt: iso.nullable(),
    durationMs: z.number().nullable(),
    usage: usageSchema,
    error: errorInfoSchema.nullable(),
    input: z.unknown().optional(),
    prompt: promptSchema.nullable().optional(),
    output: z.unknown().optional(),
    damage: z
      .object({
        row: z.string().optional(),
        input: z.string().optional(),
        output: z.string().optional(),
        usage: z.string().optional(),
        prompt: z.string().optional(),
      })
      .optional()
      .openapi({
        description:
          'Payloads the store holds but cannot read back (damage on disk), each with what is wrong; `row` when the whole row is unreadable (the step is then listed as failed, with only its place known).',
      }),
  })
  .openapi('Step');

// ---------------------------------------------------------------------------------------------
// Request bodies and queries

const title = noNul(z.string().trim().min(1).max(300));
const stepRef = noNul(z.string().min(1).max(500));

export const createSessionBody = z
  .object({
    question: noNul(z.string().trim().min(1).max(100_000)),
    title: title.optional(),
    settings: z.record(z.string(), z.unknown()).optional(),
    docs: z
      .array(noNul(z.string().min(1).max(4000)))
      .max(20)
      .optional()
      .openapi({ description: 'Document folders: names of the server’s folders, or folders inside them' }),
    search: z
      .array(noNul(z.string().min(1).max(50)))
      .max(10)
      .optional(),
    start: z.boolean().optional().openapi({ description: 'false: create it parked, to resume later' }),
    externalId: noNul(z.string().min(1).max(200)).optional().openapi({
      description: 'Your own id for it (a job id): creating again with the same one returns the same session',
    }),
  })
  .strict();

export const updateSessionBody = z
  .object({
    title: title.optional(),
    settings: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: 'Settings to change (model, iterations…); effective on the next resume' }),
  })
  .strict();

export const resumeBody = z
  .object({
    from: stepRef.optional(),
    force: z.boolean().optional(),
    docs: z
      .array(noNul(z.string().min(1).max(4000)))
      .max(20)
      .optional(),
    search: z
      .array(noNul(z.string().min(1).max(50)))
      .max(10)
      .optional(),
    replaceSources: z.boolean().optional(),
  })
  .strict();

export const forkBody = z
  .object({
    from: stepRef.optional(),
    turn: z.number().int().min(1).max(1_000_000).optional().openapi({
      description:
        'An earlier turn (run number; 1 is the first report, before follow-ups): the fork ends with it, or, with `from`, starts again inside it.',
    }),
    title: title.optional(),
    run: z.boolean().optional(),
  })
  .strict();
export const messageBody = z.object({ role: z.literal('user'), content: noNul(z.string().max(1_000_000)) }).strict();

export const listQuery = z.object({
  status: z
    .string()
    .optional()
    .transform((value) => (value ? value.split(',') : undefined))
    .pipe(z.array(z.enum(sessionStatuses)).optional()),
  q: noNul(z.string().max(500)).optional(),
  externalId: noNul(z.string().min(1).max(200))
    .optional()
    .openapi({ description: 'Only the session with this external id (your job id): a list of one, or empty' }),
  limit: z.coerce.number().int().min(1).max(500).optional(),
  cursor: noNul(z.string().max(1000)).optional(),
});

export const deleteQuery = z.object({ force: z.enum(['true', 'false']).optional() });
export const messagesQuery = z.object({
  runId: sessionIdSchema.optional(),
  phase: noNul(z.string().max(100)).optional(),
});
export const stepsQuery = z.object({
  phase: noNul(z.string().max(100)).optional(),
  include: z.enum(['prompts', 'inputs']).optional().openapi({
    description:
      '`prompts`: each step with its input, prompt and output; `inputs`: with its input only (a query, a URL), small enough for a whole journal.',
  }),
});
export const stepParams = idParams.extend({
  runId: sessionIdSchema.openapi({ param: { name: 'runId', in: 'path' } }),
  key: stepRef.openapi({ param: { name: 'key', in: 'path' }, description: 'The step key, URL-encoded once' }),
});
export const citationParams = idParams.extend({
  number: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .openapi({ param: { name: 'number', in: 'path' } }),
});
export const citationQuery = z.object({
  version: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .optional()
    .openapi({ description: 'The report version whose `[n]` this is (default: the latest).' }),
  answer: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .openapi({ description: 'The id of the conversation answer whose `[n]` this is (instead of a report version).' }),
});

export const citationSchema = z
  .object({
    number: z.number().int(),
    url: z.string(),
    title: z.string(),
    location: z.string(),
    version: z.number().int().nullable().openapi({ description: 'The report version cited (null: an answer).' }),
    answer: z
      .string()
      .nullable()
      .openapi({ description: 'The conversation answer cited, by message id (null: a report version).' }),
    claims: z.array(z.object({ claim: z.string(), verdict: z.string(), reason: z.string() })),
    passages: z.array(z.object({ before: z.string(), quote: z.string(), after: z.string() })),
  })
  .openapi('Citation');

export const exportQuery = z.object({
  format: z.enum(['md', 'html', 'pdf', 'json', 'legacy-json']).default('md'),
  version: z.coerce.number().int().min(1).max(100_000).optional().openapi({
    description:
      'md, html, pdf: this report version, under its own title (default: the latest, with the conversation).',
  }),
});
/** At most this many sessions followed on one live stream (a browser's open tabs). */
export const LIVE_WATCH_LIMIT = 50;
/** `watch=<id>:<after>,…`: the sessions whose events a live stream carries, each from an offset. */
export const liveQuery = z.object({
  watch: z
    .string()
    .max(LIVE_WATCH_LIMIT * 150)
    .optional()
    .transform((text, ctx) => {
      const entries = (text ?? '').split(',').filter(Boolean);
      if (entries.length > LIVE_WATCH_LIMIT) {
        ctx.addIssue({ code: 'custom', message: `follows at most ${LIVE_WATCH_LIMIT} sessions` });
        return z.NEVER;
      }
      const watched = new Map<string, number>();
      for (const entry of entries) {
        const match = /^([A-Za-z0-9_-]{1,128}):(\d{1,15})$/.exec(entry);
        if (!match) {
          ctx.addIssue({ code: 'custom', message: `"${entry.slice(0, 40)}" is not <session id>:<offset>` });
          return z.NEVER;
        }
        watched.set(match[1]!, Math.min(watched.get(match[1]!) ?? Number.MAX_SAFE_INTEGER, Number(match[2])));
      }
      return watched;
    }),
});
export const eventsQuery = z.object({ after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional() });

export const capabilitiesSchema = z
  .object({
    version: z.string(),
    analyst: z.object({
      kind: z.enum(['llm', 'extractive']),
      model: z.string().nullable(),
      fastModel: z.string().nullable(),
    }),
    /** The models (`provider:model`) a request may choose: the configured ones and the operator's list. */
    models: z.array(z.string()),
    searchProviders: z.array(z.string()),
    /** The document folders this server reads, by name. */
    documentFolders: z.array(z.object({ name: z.string(), path: z.string() })),
    defaultSearch: z.array(z.string()),
    /** The user's library: its folder's name among `documentFolders` (null until a first document), and its limits. */
    library: z.object({ root: z.string().nullable(), fileBytes: z.number().int(), limitBytes: z.number().int() }),
    indexing: z.object({
      state: z.enum(['idle', 'indexing', 'failed']),
      done: z.number().int(),
      total: z.number().int(),
      error: z.string().nullable(),
    }),
    runner: z.boolean(),
    auth: z.enum(['local', 'tokens']),
    limits: z.object({
      maxIterations: z.number().int(),
      maxQueriesPerIteration: z.number().int(),
      maxSourcesPerQuery: z.number().int(),
      questionChars: z.number().int(),
      activeRuns: z.number().int(),
      bodyBytes: z.number().int(),
      streams: z.number().int(),
      importBytes: z.number().int(),
      tokenBudget: z.number().int(),
      costBudgetUsd: z.number().nullable(),
    }),
  })
  .openapi('Capabilities');

/** A document of a user's library (`/api/documents`). */
export const libraryDocumentSchema = z
  .object({
    id: z.string().describe('The document’s folder: `library/<id>` in `docs` limits a research to it'),
    name: z.string(),
    kind: z.string(),
    size: z.number().int(),
    title: z.string(),
    addedAt: z.string(),
  })
  .openapi('LibraryDocument');

export type SessionSummaryWire = z.output<typeof sessionSummarySchema>;
export type SessionDetailWire = z.output<typeof sessionDetailSchema>;
export type CitationWire = z.output<typeof citationSchema>;
export type LibraryDocumentWire = z.output<typeof libraryDocumentSchema>;
export type ReportWire = z.output<typeof reportSchema>;
export type ReportVersionWire = z.output<typeof reportVersionSchema>;
export type StepWire = z.output<typeof stepSchema>;
export type SourceWire = z.output<typeof sourceSchema>;
export type MessageWire = z.output<typeof messageSchema>;
export type CapabilitiesWire = z.output<typeof capabilitiesSchema>;
export type ClaimWire = z.output<typeof claimSchema>;
