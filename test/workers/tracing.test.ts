import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../src/store/conformance/harness.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { FakeOpenAiServer } from '../support/fake-openai-server.ts';
import { schemaFakeModel } from '../support/schema-fake-model.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'quarry');
const fixtures = join(root, 'test', 'fixtures', 'corpus');

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  service: string;
}

/** An OTLP/HTTP collector (JSON, as the OpenTelemetry exporter sends it): keeps every span it is sent. */
async function collector(): Promise<{ url: string; spans: Span[]; server: Server }> {
  const spans: Span[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        const parsed = JSON.parse(body) as {
          resourceSpans: {
            resource: { attributes: Span['attributes'] };
            scopeSpans: { spans: Omit<Span, 'service'>[] }[];
          }[];
        };
        for (const resource of parsed.resourceSpans) {
          const service = resource.resource.attributes.find((each) => each.key === 'service.name')?.value
            .stringValue as string;
          for (const scope of resource.scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, server };
}

const attribute = (span: Span, key: string) => {
  const value = span.attributes.find((each) => each.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};

describe('OpenTelemetry traces from the built CLI', () => {
  let fake: FakeOpenAiServer;
  let traces: Awaited<ReturnType<typeof collector>>;
  let home: string;
  let docs: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    fake = await new FakeOpenAiServer(schemaFakeModel()).start();
    traces = await collector();
    home = mkdtempSync(join(tmpdir(), 'quarry-traces-'));
    docs = join(home, 'docs');
    cpSync(fixtures, docs, { recursive: true });
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await fake?.stop();
    await new Promise((resolve) => traces?.server.close(resolve));
    rmSync(home, { recursive: true, force: true });
  });

  it('continues a request’s trace into the worker that runs it: run, steps, model calls, search', {
    timeout: within(120_000),
  }, async () => {
    const env = {
      ...childEnv(),
      QUARRY_HOME: home,
      QUARRY_LLM_BASE_URL: fake.baseUrl,
      QUARRY_LLM_API_KEY: 'k',
      QUARRY_SERVER_MODELS: 'openai-compatible:fake',
      OTEL_EXPORTER_OTLP_ENDPOINT: traces.url,
      OTEL_BSP_SCHEDULE_DELAY: '200',
    };
    const start = (args: string[], service: string) => {
      const child = spawn(process.execPath, [bin, ...args], {
        env: { ...env, OTEL_SERVICE_NAME: service },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (chunk) => (stderr += chunk));
      children.push(child);
      return { child, stderr: () => stderr, exited: new Promise((resolve) => child.on('exit', resolve)) };
    };
    const server = start(['serve', '--port', '0', '--docs', docs, '--no-runner'], 'quarry-api');
    await eventually(() => /listening on (http:\/\/\S+?) /.test(server.stderr()), 30_000);
    const url = /listening on (http:\/\/\S+?) /.exec(server.stderr())![1]!;
    // The caller's own trace: the request carries it, and everything the run does belongs to it.
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const created = await (
      await fetch(`${url}/api/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        body: JSON.stringify({
          question: 'How does tidal power generate electricity?',
          settings: { maxIterations: 1, model: 'openai-compatible:fake' },
        }),
      })
    ).json();
    const worker = start(['worker', '--concurrency', '1'], 'quarry-worker');
    await eventually(
      async () => (await (await fetch(`${url}/api/sessions/${created.id}`)).json()).status === 'completed',
      60_000,
    );
    // A read a caller traces is traced; the polls above (no `traceparent`) are not.
    const readTrace = '5bf92f3577b34da6a3ce929d0e0e4737';
    await fetch(`${url}/api/sessions/${created.id}`, {
      headers: { traceparent: `00-${readTrace}-00f067aa0ba902b8-01` },
    });
    worker.child.kill('SIGTERM');
    server.child.kill('SIGTERM');
    await Promise.all([worker.exited, server.exited]);

    // (A poll that took a second or more, as on a loaded machine, is recorded: that is the rule.)
    const reads = traces.spans.filter((span) => span.name === 'GET /api/sessions/:id');
    const lasted = (span: Span) => (Number(span.endTimeUnixNano) - Number(span.startTimeUnixNano)) / 1e6;
    expect(reads.filter((span) => span.traceId === readTrace)).toHaveLength(1);
    expect(reads.filter((span) => span.traceId !== readTrace && lasted(span) < 1000)).toEqual([]);
    const inTrace = traces.spans.filter((span) => span.traceId === traceId);
    const request = inTrace.find((span) => span.service === 'quarry-api' && span.name === 'POST /api/sessions');
    expect(request, JSON.stringify(traces.spans.map((span) => span.name))).toBeDefined();
    expect(request!.parentSpanId).toBe('00f067aa0ba902b7');
    // The worker's run continues the request's span, through the store.
    const run = inTrace.find((span) => span.name === 'quarry.run');
    expect(run).toMatchObject({ service: 'quarry-worker', parentSpanId: request!.spanId });
    expect(attribute(run!, 'quarry.session.id')).toBe(created.id);
    const steps = inTrace.filter((span) => span.name === 'quarry.step');
    expect(steps.length).toBeGreaterThan(5);
    expect(steps.every((span) => span.parentSpanId === run!.spanId)).toBe(true);
    expect(new Set(steps.map((span) => attribute(span, 'quarry.step.kind')))).toEqual(new Set(['task', 'llm']));
    // Model calls follow the GenAI conventions (the AI SDK's own spans), under their step.
    const stepIds = new Set(steps.map((span) => span.spanId));
    const modelCalls = inTrace.filter((span) => attribute(span, 'gen_ai.request.model') !== undefined);
    expect(modelCalls.length).toBeGreaterThan(0);
    expect(modelCalls.some((span) => Number(attribute(span, 'gen_ai.usage.input_tokens')) > 0)).toBe(true);
    const roots = modelCalls.map((span) => {
      let current: Span | undefined = span;
      while (current && !stepIds.has(current.spanId))
        current = inTrace.find((each) => each.spanId === current!.parentSpanId);
      return current;
    });
    expect(roots.every(Boolean)).toBe(true);
    // No prompt text unless the operator opts in.
    expect(modelCalls.some((span) => attribute(span, 'ai.prompt') !== undefined)).toBe(false);
    expect(inTrace.some((span) => span.name === 'quarry.search')).toBe(true);
    expect(traces.spans.some((span) => span.name === 'quarry.lease.claim' && span.service === 'quarry-worker')).toBe(
      true,
    );
    // Only claims that claimed are traced: the idle polls between are no root trace each (issue 45).
    for (const claim of traces.spans.filter((span) => span.name === 'quarry.lease.claim'))
      expect(attribute(claim, 'quarry.session.id')).toBeTruthy();
  });
  it('keeps one trace across a CLI run killed mid-run and resumed in another process (issue 45)', {
    timeout: within(120_000),
  }, async () => {
    const held = await new FakeOpenAiServer(schemaFakeModel()).start();
    try {
      const env = {
        ...childEnv(),
        QUARRY_HOME: join(home, 'killed'),
        QUARRY_MODEL: 'openai-compatible:fake',
        QUARRY_LLM_BASE_URL: held.baseUrl,
        QUARRY_LLM_API_KEY: 'k',
        OTEL_EXPORTER_OTLP_ENDPOINT: traces.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_SERVICE_NAME: 'quarry-cli',
      };
      // Killed while it waits for its fourth model call, however fast or slow the machine.
      held.holdAfter(3);
      const run = spawn(
        process.execPath,
        [bin, '--json', 'run', 'How does tidal power generate electricity?', '--docs', docs, '--iterations', '1'],
        { env, stdio: ['ignore', 'pipe', 'ignore'] },
      );
      children.push(run);
      let stdout = '';
      run.stdout!.on('data', (chunk) => (stdout += chunk));
      const exited = new Promise((resolve) => run.on('exit', resolve));
      await held.waitUntilHeld();
      // The steps done so far reach the collector before the kill (spans are sent every 100 ms).
      await eventually(
        () => traces.spans.some((span) => span.name === 'quarry.step' && span.service === 'quarry-cli'),
        30_000,
      );
      run.kill('SIGKILL');
      await exited;
      held.release();
      const sessionId = (JSON.parse(stdout.split('\n')[0]!) as { sessionId: string }).sessionId;
      // Spawned, not spawnSync: the fake model answers from this process, which must not be blocked.
      const resume = spawn(process.execPath, [bin, 'resume', sessionId], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      children.push(resume);
      let stderr = '';
      resume.stderr!.on('data', (chunk) => (stderr += chunk));
      expect(await new Promise((resolve) => resume.on('exit', resolve)), stderr).toBe(0);
      const runs = () =>
        traces.spans.filter((span) => span.name === 'quarry.run' && attribute(span, 'quarry.session.id') === sessionId);
      // The killed activation's run span never ended; its steps did, and the resumed run's did.
      await eventually(() => runs().length >= 1, 30_000);
      const steps = traces.spans.filter(
        (span) => span.name === 'quarry.step' && span.service === 'quarry-cli' && span.traceId !== undefined,
      );
      const traceIds = new Set([...runs(), ...steps].map((span) => span.traceId));
      expect(traceIds.size, JSON.stringify([...traceIds])).toBe(1);
    } finally {
      await held.stop();
    }
  });
});
