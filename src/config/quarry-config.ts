import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import * as z from 'zod';
import { optional, strictObject } from 'zod';
import { invalidInput } from '../shared/errors.ts';

/**
 * Everything Quarry can be told, resolved once — flags > environment > `$QUARRY_HOME/config.json` >
 * defaults — into one typed object that every entry point (run, serve, worker, the API's defaults,
 * capabilities) receives. Nothing reads `process.env` past `resolveConfig`.
 */
export interface QuarryConfig {
  /** Quarry's data folder. */
  home: string;
  /** The store: an absolute SQLite path or a `postgres://` URL. */
  db: string;
  /**
   * Document folders (absolute). For the CLI, the default folders of a new research; for
   * `quarry serve`, the only folders the server reads (requests choose among them).
   */
  docs: string[];
  /**
   * Where users' libraries are kept (`QUARRY_LIBRARY`; default `$QUARRY_HOME/library`): one folder
   * per user, one folder per document in it. Workers that run a server's sessions must see it too.
   */
  library: string;
  /** Default web search providers. */
  search: string[];
  /** `provider:model`, or null for the extractive analyst. */
  model: string | null;
  /** A faster model for light steps (titles, notes, follow-up triage); null: the main model. */
  fastModel: string | null;
  /**
   * New sessions ask clarifying questions first unless a request says otherwise (their `clarify`
   * setting's default): how chat, Responses and MCP clients, which send no settings, get them.
   */
  clarify: boolean;
  /** Private hosts or CIDRs that fetches may reach. */
  fetchAllow: string[];
  /** Dollars per million tokens, for the cost ledger; null: no cost. */
  price: { inputPerMillion: number; outputPerMillion: number } | null;
  providers: ProviderSettings;
  server: ServerSettings;
}

/** Keys and addresses of model and search providers (never written into sessions or exports). */
export interface ProviderSettings {
  openai: { apiKey?: string; baseUrl?: string };
  anthropic: { apiKey?: string; baseUrl?: string };
  ollama: { baseUrl: string };
  openaiCompatible: { baseUrl?: string; apiKey?: string; structuredOutputs: boolean };
  searxng: { url?: string };
  tavily: { apiKey?: string; baseUrl?: string };
  brave: { apiKey?: string; baseUrl?: string };
  exa: { apiKey?: string; baseUrl?: string };
  jina: { apiKey?: string; baseUrl?: string };
}

export interface ServerSettings {
  host: string;
  port: number;
  /** Host names the server answers to besides the address it binds (a reverse proxy's name). */
  publicNames: string[];
  /**
   * The address users reach the server at (`https://research.example.org`), when it is behind a
   * reverse proxy: its host is answered to, tokens are always required, and cookies are `Secure`
   * when it is https.
   */
  publicUrl: string | null;
  limits: UserLimits;
  /** Largest session file `POST /api/sessions/import` accepts, in bytes. */
  importBytes: number;
  /** Connections one client address may hold open at once (more are closed). */
  connectionsPerClient: number;
  /**
   * The reverse proxies whose forwarding headers name the client (`X-Forwarded-For`, `Forwarded`):
   * by address (IPs and CIDRs the connection may come from) or by how many proxies stand in front.
   * Only then is a client told apart behind a proxy (sign-in throttle, connection cap); never used
   * to grant local mode, which a server with a trusted proxy never has. Null: no proxy is trusted.
   */
  trustProxy: TrustProxy | null;
  /**
   * How long a client that waits on a run (a chat completion, a Responses or MCP request that waits
   * or streams) waits on an outage, such as an unreachable model, before the run is stopped
   * (resumable) and the client told why, in seconds. Runs nobody waits on keep trying. Default 60.
   */
  outageWaitSeconds: number;
  /**
   * Models (`provider:model`) requests may choose besides the configured `model` and `fastModel`:
   * the server's keys pay for them. Empty: only the configured ones.
   */
  models: string[];
  /**
   * The bearer token `/metrics` requires (`QUARRY_METRICS_TOKEN`), on the server and on a worker's
   * metrics port. Null: metrics are answered without one, but only off the public path (see
   * `server/metrics-access.ts`).
   */
  metricsToken: string | null;
}

/** Which proxies' forwarding headers to believe: the ones connecting from these addresses, or the nearest `hops`. */
export type TrustProxy = { addresses: string[] } | { hops: number };

/** What one API user may ask of a server. */
export interface UserLimits {
  /** Characters in a question or message. */
  questionChars: number;
  /** Sessions queued or running at once. */
  activeRuns: number;
  /** Sessions kept in all. */
  sessions: number;
  /** Event streams (SSE, MCP) open at once. */
  streams: number;
  /** Most tokens one run may spend (a request may ask for less, never more). */
  tokenBudget: number;
  /** Most dollars one run may spend, when prices are known; null: no ceiling. */
  costBudgetUsd: number | null;
  /** Bytes of documents one user's library may hold (files added from the browser, the API or `quarry docs add`). */
  libraryBytes: number;
}

/** Values given on the command line; each wins over every other source. */
export interface ConfigFlags {
  db?: string;
  docs?: string[];
  search?: string[];
  model?: string;
  fastModel?: string;
  host?: string;
  port?: number;
}

/** `$QUARRY_HOME/config.json`: every field optional. */
function fileSchema() {
  const name = z.string().check(z.minLength(1));
  const names = optional(z.array(name));
  const int = (min: number, max?: number) =>
    max === undefined ? z.int().check(z.gte(min)) : z.int().check(z.gte(min), z.lte(max));
  const keyed = { apiKey: optional(z.string()), baseUrl: optional(z.url()) };
  return strictObject({
    db: optional(name),
    docs: names,
    library: optional(name),
    search: names,
    model: optional(name),
    fastModel: optional(name),
    clarify: optional(z.boolean()),
    fetchAllow: names,
    pricePerMillionTokens: optional(
      strictObject({ input: z.number().check(z.gte(0)), output: z.number().check(z.gte(0)) }),
    ),
    providers: optional(
      strictObject({
        openai: optional(strictObject(keyed)),
        anthropic: optional(strictObject(keyed)),
        ollama: optional(strictObject({ baseUrl: z.url() })),
        openaiCompatible: optional(strictObject({ ...keyed, structuredOutputs: optional(z.boolean()) })),
        searxng: optional(strictObject({ url: z.url() })),
        tavily: optional(strictObject(keyed)),
        brave: optional(strictObject(keyed)),
        exa: optional(strictObject(keyed)),
        jina: optional(strictObject(keyed)),
      }),
    ),
    server: optional(
      strictObject({
        host: optional(name),
        port: optional(int(0, 65535)),
        publicNames: names,
        publicUrl: optional(z.url({ protocol: /^https?$/ })),
        importBytes: optional(int(1024)),
        connectionsPerClient: optional(int(1)),
        trustProxy: optional(z.union([int(1, 10), z.array(name).check(z.minLength(1))])),
        outageWaitSeconds: optional(int(1, 240)),
        models: names,
        metricsToken: optional(z.string().check(z.minLength(16), z.maxLength(512))),
        limits: optional(
          strictObject({
            questionChars: optional(int(100)),
            activeRuns: optional(int(1)),
            sessions: optional(int(1)),
            streams: optional(int(1)),
            tokenBudget: optional(int(1000)),
            costBudgetUsd: optional(z.nullable(z.number().check(z.gte(0)))),
            libraryBytes: optional(int(1024 * 1024)),
          }),
        ),
      }),
    ),
  });
}

export type ConfigFile = z.infer<ReturnType<typeof fileSchema>>;

export const defaultLimits: UserLimits = {
  questionChars: 20_000,
  activeRuns: 4,
  sessions: 10_000,
  streams: 32,
  tokenBudget: 2_000_000,
  costBudgetUsd: null,
  libraryBytes: 512 * 1024 * 1024,
};

/** Default largest session file an import accepts: 32 MiB. */
export const DEFAULT_IMPORT_BYTES = 32 * 1024 * 1024;

export function quarryHome(env: NodeJS.ProcessEnv): string {
  return resolve(env.QUARRY_HOME || join(homedir(), '.quarry'));
}

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

function list(value: string | undefined, separator: string | RegExp): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return value
    .split(separator)
    .map((item) => item.trim())
    .filter(Boolean);
}

function readConfigFile(path: string): ConfigFile {
  if (!existsSync(path)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw invalidInput('config', `${path} is not valid JSON: ${(error as Error).message}`);
  }
  const result = fileSchema().safeParse(parsed);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw invalidInput('config', `${path}: ${issue.path.join('.') || 'the file'} ${issue.message}`);
}

function parsePrice(text: string | undefined, file: ConfigFile['pricePerMillionTokens']): QuarryConfig['price'] {
  if (text) {
    const [input, output] = text.split(',').map(Number);
    if (!Number.isFinite(input) || !Number.isFinite(output) || input! < 0 || output! < 0) {
      throw invalidInput('QUARRY_PRICE_PER_MTOK', `"${text}" is not "input,output" dollars per million tokens`);
    }
    return { inputPerMillion: input!, outputPerMillion: output! };
  }
  return file ? { inputPerMillion: file.input, outputPerMillion: file.output } : null;
}

/** An on/off variable: 1, true, yes, on / 0, false, no, off (any case); unset or empty says nothing. */
function parseSwitch(name: string, text: string | undefined): boolean | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const word = text.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(word)) return true;
  if (['0', 'false', 'no', 'off'].includes(word)) return false;
  throw invalidInput(name, `"${text}" is neither on (1, true, yes, on) nor off (0, false, no, off)`);
}

/**
 * `QUARRY_TRUST_PROXY`: a number of proxies in front (`1`), or the addresses and CIDRs they connect
 * from (`127.0.0.1,10.0.0.0/8`). Anything else is refused at start.
 */
function parseTrustProxy(text: string | undefined): TrustProxy | undefined {
  if (text === undefined) return undefined;
  const value = text.trim();
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 10) throw invalidInput('QUARRY_TRUST_PROXY', `"${text}" is not 1 to 10 proxies`);
    return { hops };
  }
  return trustFromFile(list(value, ',') ?? []) ?? undefined;
}

function trustFromFile(value: number | string[] | undefined): TrustProxy | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return { hops: value };
  for (const address of value)
    if (!isAddressOrRange(address))
      throw invalidInput('QUARRY_TRUST_PROXY', `"${address}" is not an IP address or a CIDR range (10.0.0.0/8)`);
  return { addresses: value };
}

function isAddressOrRange(text: string): boolean {
  const [address, bits, extra] = text.split('/');
  if (extra !== undefined || !address || isIP(address) === 0) return false;
  if (bits === undefined) return true;
  const size = Number(bits);
  return /^\d+$/.test(bits) && size >= 0 && size <= (isIP(address) === 4 ? 32 : 128);
}

/** `QUARRY_METRICS_TOKEN`: a secret long enough not to be guessed, without spaces (it is sent as a bearer token). */
function parseMetricsToken(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (!/^\S{16,512}$/.test(text))
    throw invalidInput(
      'QUARRY_METRICS_TOKEN',
      'must be 16 to 512 characters without spaces (openssl rand -hex 32 makes one)',
    );
  return text;
}

/** `QUARRY_OUTAGE_WAIT`: whole seconds, 1 to 240 (under every server, proxy and client timeout). */
function parseOutageWait(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = Number(text);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 240)
    throw invalidInput('QUARRY_OUTAGE_WAIT', `"${text}" is not a whole number of seconds from 1 to 240`);
  return seconds;
}

function parsePort(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw invalidInput('QUARRY_PORT', `"${text}" is not a port`);
  return port;
}

function parsePublicUrl(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidInput('QUARRY_PUBLIC_URL', `"${text}" is not a URL (e.g. https://research.example.org)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalidInput('QUARRY_PUBLIC_URL', `"${text}" must be an http or https URL`);
  return url.origin;
}

function absolute(location: string): string {
  return isPostgresUrl(location) ? location : resolve(location);
}

/**
 * The configuration from flags, an environment (`process.env` at the entry point, a plain object
 * in tests) and the config file in `$QUARRY_HOME`. A malformed file or value is `INVALID_INPUT`
 * naming it.
 */
export function resolveConfig(options: { env: NodeJS.ProcessEnv; flags?: ConfigFlags }): QuarryConfig {
  const { env } = options;
  const flags = options.flags ?? {};
  const home = quarryHome(env);
  const file = readConfigFile(join(home, 'config.json'));
  const providers = file.providers ?? {};
  const server = file.server ?? {};
  return {
    home,
    db: absolute(flags.db ?? (env.QUARRY_DB || undefined) ?? file.db ?? join(home, 'quarry.db')),
    // Folders are separated like PATH (":" here); providers by commas.
    docs: (flags.docs ?? list(env.QUARRY_DOCS, delimiter) ?? file.docs ?? []).map((folder) => resolve(folder)),
    library: absolute((env.QUARRY_LIBRARY || undefined) ?? file.library ?? join(home, 'library')),
    search: flags.search ?? list(env.QUARRY_SEARCH, ',') ?? file.search ?? [],
    model: flags.model ?? (env.QUARRY_MODEL || undefined) ?? file.model ?? null,
    fastModel: flags.fastModel ?? (env.QUARRY_FAST_MODEL || undefined) ?? file.fastModel ?? null,
    clarify: parseSwitch('QUARRY_CLARIFY', env.QUARRY_CLARIFY) ?? file.clarify ?? false,
    fetchAllow: list(env.QUARRY_FETCH_ALLOW, ',') ?? file.fetchAllow ?? [],
    price: parsePrice(env.QUARRY_PRICE_PER_MTOK, file.pricePerMillionTokens),
    providers: {
      openai: {
        apiKey: env.OPENAI_API_KEY ?? providers.openai?.apiKey,
        baseUrl: env.OPENAI_BASE_URL ?? providers.openai?.baseUrl,
      },
      anthropic: {
        apiKey: env.ANTHROPIC_API_KEY ?? providers.anthropic?.apiKey,
        baseUrl: env.ANTHROPIC_BASE_URL ?? providers.anthropic?.baseUrl,
      },
      ollama: { baseUrl: env.OLLAMA_BASE_URL ?? providers.ollama?.baseUrl ?? 'http://127.0.0.1:11434' },
      openaiCompatible: {
        baseUrl: env.QUARRY_LLM_BASE_URL ?? providers.openaiCompatible?.baseUrl,
        apiKey: env.QUARRY_LLM_API_KEY ?? providers.openaiCompatible?.apiKey,
        structuredOutputs:
          parseSwitch('QUARRY_LLM_STRUCTURED_OUTPUTS', env.QUARRY_LLM_STRUCTURED_OUTPUTS) ??
          providers.openaiCompatible?.structuredOutputs ??
          true,
      },
      searxng: { url: env.SEARXNG_URL ?? providers.searxng?.url },
      tavily: {
        apiKey: env.TAVILY_API_KEY ?? providers.tavily?.apiKey,
        baseUrl: env.TAVILY_BASE_URL ?? providers.tavily?.baseUrl,
      },
      brave: {
        apiKey: env.BRAVE_API_KEY ?? providers.brave?.apiKey,
        baseUrl: env.BRAVE_BASE_URL ?? providers.brave?.baseUrl,
      },
      exa: { apiKey: env.EXA_API_KEY ?? providers.exa?.apiKey, baseUrl: env.EXA_BASE_URL ?? providers.exa?.baseUrl },
      jina: {
        apiKey: env.JINA_API_KEY ?? providers.jina?.apiKey,
        baseUrl: env.JINA_BASE_URL ?? providers.jina?.baseUrl,
      },
    },
    server: {
      host: flags.host ?? (env.QUARRY_HOST || undefined) ?? server.host ?? '127.0.0.1',
      port: flags.port ?? parsePort(env.QUARRY_PORT) ?? server.port ?? 7777,
      publicNames: list(env.QUARRY_PUBLIC_NAMES, ',') ?? server.publicNames ?? [],
      publicUrl: parsePublicUrl(env.QUARRY_PUBLIC_URL || undefined) ?? parsePublicUrl(server.publicUrl) ?? null,
      limits: { ...defaultLimits, ...server.limits },
      importBytes: server.importBytes ?? DEFAULT_IMPORT_BYTES,
      connectionsPerClient: server.connectionsPerClient ?? 64,
      trustProxy: parseTrustProxy(env.QUARRY_TRUST_PROXY || undefined) ?? trustFromFile(server.trustProxy) ?? null,
      outageWaitSeconds: parseOutageWait(env.QUARRY_OUTAGE_WAIT || undefined) ?? server.outageWaitSeconds ?? 60,
      models: list(env.QUARRY_SERVER_MODELS, ',') ?? server.models ?? [],
      metricsToken: parseMetricsToken(env.QUARRY_METRICS_TOKEN || undefined) ?? server.metricsToken ?? null,
    },
  };
}
