import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Runner } from '../../src/engine/runner.ts';
import { citedNumbers } from '../../src/research/citations.ts';
import { markClaims } from '../../src/research/mark-claims.ts';
import { locateQuote } from '../../src/research/quotes.ts';
import type { ResearchOutput, SourceText } from '../../src/research/research-types.ts';
import { localServiceContext } from '../../src/service/local-context.ts';
import { createWorkflowRegistry } from '../../src/service/research-runtime.ts';
import { askSession, startResearch } from '../../src/service/start-research.ts';
import { type Clock, ManualClock } from '../../src/shared/clock.ts';
import { eventually, type StoreHarness, type TestDatabase } from '../../src/store/conformance/harness.ts';
import { postgresHarness, postgresSkipReason } from '../../src/store/postgres/postgres-harness.ts';
import { sqliteHarness } from '../../src/store/sqlite/sqlite-harness.ts';
import { within } from '../support/bounds.ts';
import { childEnv } from '../support/child-env.ts';
import { FakeOpenAiServer, lastUserOf, type Responder, systemOf } from '../support/fake-openai-server.ts';
import { tallyPrompts } from '../support/model-calls.ts';
import { INVENTED, type SchemaFakeOptions, schemaFakeModel } from '../support/schema-fake-model.ts';
import { testConfig } from '../support/test-config.ts';

const fixtures = fileURLToPath(new URL('../fixtures/corpus/', import.meta.url));
const projectRoot = fileURLToPath(new URL('../../', import.meta.url));
const QUESTION = 'How does tidal power generate electricity, and where are tidal stations?';

function describeModelResearch(harness: StoreHarness, skipReason: string | null, full: boolean) {
  describe.skipIf(skipReason !== null)(`research with a model on ${harness.name}`, () => {
    let database: TestDatabase;
    let folder: string;
    let server: FakeOpenAiServer | undefined;

    beforeEach(async () => {
      database = await harness.create();
      folder = mkdtempSync(join(tmpdir(), 'quarry-model-research-'));
      cpSync(fixtures, folder, { recursive: true });
    });
    afterEach(async () => {
      await server?.stop();
      server = undefined;
      await database.destroy();
      rmSync(folder, { recursive: true, force: true });
    });

    function modelEnv(extra: Record<string, string> = {}): Record<string, string> {
      return {
        QUARRY_LLM_BASE_URL: server!.baseUrl,
        QUARRY_LLM_API_KEY: 'test-key',
        QUARRY_PRICE_PER_MTOK: '1,2',
        ...extra,
      };
    }

    async function research(
      fake: SchemaFakeOptions,
      settings: Record<string, unknown> = {},
      env: Record<string, string> = {},
      /** Stands between the client and the fake model (an outage). */
      wrap: (model: Responder) => Responder = (model) => model,
      /** The clock a step's retry back-offs wait on (the real one unless a test injects time). */
      retryClock?: Clock,
    ) {
      server = await new FakeOpenAiServer(wrap(schemaFakeModel(fake))).start();
      const config = testConfig(modelEnv(env));
      const { session } = await startResearch(localServiceContext(database.store, config), {
        question: QUESTION,
        docs: [folder],
        settings: { model: 'openai-compatible:fake-model', maxIterations: 2, queriesPerIteration: 2, ...settings },
      });
      const result = await new Runner({
        store: database.store,
        workflows: createWorkflowRegistry(database.store, config),
        log: () => undefined,
        retryClock,
      }).runSession(session.id);
      expect(result.status, JSON.stringify(result.error)).toBe('completed');
      const journal = await database.store.loadJournal(session.currentRunId!);
      const read = journal
        .filter((step) => /\/read-\d+$/.test(step.key) && step.status === 'completed')
        .map((step) => step.output as SourceText);
      return { session, output: result.output as ResearchOutput, journal, read };
    }

    /**
     * The fabricated-citation rate is zero: every `[n]` names a listed source, every listed source
     * was read in this session, and every note behind a citation quotes its source's own words.
     */
    function expectNoFabricatedCitation(output: ResearchOutput, read: SourceText[]) {
      const numbers = new Set(output.citations.map((source) => source.number));
      for (const number of citedNumbers(output.report!.split('## Sources')[0]!))
        expect(numbers.has(number), `[${number}]`).toBe(true);
      const readUrls = new Set(read.map((source) => source.url));
      for (const source of output.citations) expect(readUrls.has(source.url), source.url).toBe(true);
      const cited = new Set(output.citations.map((source) => source.url));
      const backing = output.notes.filter((note) => cited.has(note.url) && note.verified !== false);
      for (const url of cited)
        expect(
          backing.some((note) => note.url === url),
          url,
        ).toBe(true);
      for (const note of backing) {
        const texts = read.filter((source) => source.url === note.url).map((source) => source.text);
        expect(
          texts.some((text) => locateQuote(text, note.quote ?? note.text) !== null),
          note.quote,
        ).toBe(true);
      }
    }

    it.skipIf(harness.name !== 'sqlite')(
      'waits out a model server that stays down through many retries, and finishes (issue 36)',
      async () => {
        let calls = 0;
        // Down for six calls in a row from the fourth: the step waits, back-offs doubling, and goes on.
        // The back-offs are waited on an injected clock: what is tested is the schedule, not the time.
        const clock = new ManualClock();
        const { session } = await research(
          { behavior: 'honor' },
          { maxIterations: 1 },
          {},
          (model) => (request, call) => {
            calls += 1;
            if (calls >= 4 && calls < 10)
              throw Object.assign(new Error('the model server is restarting'), { status: 503 });
            return model(request, call);
          },
          clock,
        );
        const events = await database.store.readEvents(session.id, { after: 0, limit: 5000 });
        const retries = events.filter((event) => event.type === 'step-retry');
        expect(retries).toHaveLength(6);
        expect(retries[0]!.data).toMatchObject({ error: { message: expect.stringContaining('unavailable') } });
        expect(clock.waits).toEqual([500, 1_000, 2_000, 4_000, 8_000, 16_000]);
      },
    );

    it('uses the provider schema mode, cites only checked quotes, verifies every claim, keeps state', async () => {
      const { session, output, journal, read } = await research(
        { behavior: 'honor' },
        { systemInstruction: 'Write for engineers.' },
      );
      if (process.env.SHOW_REPORT) console.log(output.report, JSON.stringify(output.state, null, 1));
      expect(server!.unexpected).toEqual([]);
      const structured = server!.calls.filter((call) => call.request.response_format);
      expect(structured.length).toBeGreaterThan(0);
      expect(structured.every((call) => call.request.response_format!.type === 'json_schema')).toBe(true);
      expect(server!.calls.every((call) => systemOf(call.request).includes('Write for engineers.'))).toBe(true);
      expect(server!.calls.some((call) => call.request.stream === true)).toBe(true);

      expect(output.report).toContain('Written by openai-compatible:fake-model');
      expect(output.citations.length).toBeGreaterThan(0);
      expectNoFabricatedCitation(output, read);
      // Every sentence of the report was judged, and the model's entailment check was journaled.
      expect(output.claims!.length).toBeGreaterThan(0);
      expect(output.claims!.every((claim) => ['supported', 'unsupported', 'uncited'].includes(claim.verdict))).toBe(
        true,
      );
      expect(journal.find((step) => step.key === 'verify/judge-0')).toMatchObject({ kind: 'llm', status: 'completed' });
      expect(output.flagged).toEqual(output.claims!.filter((claim) => claim.verdict !== 'supported'));

      // Each iteration ends with a journaled summary, announced with the aspects covered and open.
      expect(journal.some((step) => step.key === 'iteration-1/findings')).toBe(true);
      const events = await database.store.readEvents(session.id);
      const findings = events.filter((event) => event.type === 'findings-update');
      expect(findings.length).toBeGreaterThan(0);
      expect(events.filter((event) => event.type === 'notes-take').length).toBe(read.length);
      expect(events.filter((event) => event.type === 'report-delta').length).toBeGreaterThan(1);

      // The research state: searches done, tokens per source read, the last findings.
      const state = output.state!;
      expect(state.topics.done).toEqual(output.queries);
      for (const source of read) expect(state.tokensPerSource[source.url]).toBeGreaterThan(0);
      expect(state.findings).toBe((findings.at(-1)!.data as { summary: string }).summary);

      // Prompts and usage of a model step are stored with it.
      const steps = await database.store.listSteps(session.id, { includePrompts: true });
      const plan = steps.find((step) => step.key === 'plan')!;
      expect(plan).toMatchObject({ kind: 'llm', usage: { model: 'openai-compatible:fake-model' } });
      expect(plan.usage!.costUsd).toBeGreaterThan(0);
      expect(plan.prompt!.user).toContain(QUESTION);
    });

    if (!full) return;

    it('repairs replies wrapped in prose, with the schema in the prompt when the provider has no schema mode', async () => {
      const wrapped = await research({ behavior: 'prose' });
      expect(wrapped.output.report).toContain('## Sources');
      const { output, read } = await research({ behavior: 'prose' }, {}, { QUARRY_LLM_STRUCTURED_OUTPUTS: '0' });
      const structured = server!.calls.filter((call) => call.request.response_format);
      expect(structured.every((call) => call.request.response_format!.type === 'json_object')).toBe(true);
      expect(structured.every((call) => lastUserOf(call.request).includes('JSON Schema'))).toBe(true);
      expectNoFabricatedCitation(output, read);
    });

    it('retries a reply that breaks the schema with the validation error shown to the model', async () => {
      const { session } = await research({ behavior: 'honor', firstAttemptInvalid: true });
      const planCalls = server!.calls.filter((call) => lastUserOf(call.request).includes('That reply was invalid'));
      expect(planCalls.length).toBeGreaterThan(0);
      expect(lastUserOf(planCalls[0]!.request)).toMatch(/That reply was invalid: .*(expected|Invalid|required)/);
      // Usage is summed over both attempts.
      const plan = (await database.store.listSteps(session.id)).find((step) => step.key === 'plan')!;
      const sent = server!.calls.filter((call) => call.request.messages[1]?.content.includes(QUESTION));
      expect(sent.length).toBeGreaterThanOrEqual(2);
      expect(plan.usage!.inputTokens).toBeGreaterThan(0);
    });

    it('never cites an invented quote or source, and records citations to sources that do not exist', async () => {
      const { output, read } = await research({ behavior: 'invent' });
      expectNoFabricatedCitation(output, read);
      // The model's invented quotes were caught: those notes are never cited.
      expect(output.notes.some((note) => note.verified === false)).toBe(true);
      // What it invented in its prose is never passed as supported, even though it judged it so.
      const invented = output.claims!.filter((claim) =>
        INVENTED.some((sentence) => claim.claim.includes(sentence.slice(0, 30))),
      );
      expect(invented.length).toBeGreaterThan(0);
      for (const claim of invented) expect(claim.verdict, claim.claim).not.toBe('supported');
      const report = output.report!;
      // `[7]` and `[42]` named no source: removed from the text, recorded on their claims.
      const unknown = output.claims!.flatMap((claim) => claim.unknownCitations ?? []);
      expect(unknown).toEqual(expect.arrayContaining([42]));
      // The report says what its checks found after its sections; a reader's view marks the claims in place.
      expect(report).toContain('nothing in this report is verified');
      expect(markClaims(report, output.claims!)).toContain('**[uncited]**');
    });

    it('stops researching when the token budget is spent and writes the best report it can', async () => {
      const budget = 1000;
      const { output, journal } = await research(
        { behavior: 'honor', booleans: false },
        { maxIterations: 10, queriesPerIteration: 1, tokenBudget: budget },
      );
      // Tokens spent by the end of each iteration (its analysis is its last step).
      let spent = 0;
      const spentAfter: number[] = [];
      for (const step of journal) {
        const usage = (step.output as { usage?: { inputTokens?: number; outputTokens?: number } | null })?.usage;
        spent += (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0);
        const iteration = /^iteration-(\d+)\/analyze$/.exec(step.key)?.[1];
        if (iteration) spentAfter[Number(iteration) - 1] = spent;
      }
      // Research went on while under budget and stopped after the first iteration that spent it.
      expect(spentAfter.length).toBeLessThan(10);
      expect(spentAfter.at(-1)).toBeGreaterThanOrEqual(budget);
      for (const before of spentAfter.slice(0, -1)) expect(before).toBeLessThan(budget);
      expect(output.report).toMatch(/^# /);
    });

    it('fails the step clearly when the model never gives valid JSON, keeping the prompt it sent', async () => {
      server = await new FakeOpenAiServer(() => 'no json here').start();
      const config = testConfig(modelEnv());
      const { session } = await startResearch(localServiceContext(database.store, config), {
        question: QUESTION,
        docs: [folder],
        settings: { model: 'openai-compatible:fake-model' },
      });
      const result = await new Runner({
        store: database.store,
        workflows: createWorkflowRegistry(database.store, config),
        log: () => undefined,
      }).runSession(session.id);
      expect(result).toMatchObject({
        status: 'failed',
        error: { code: 'STEP_FAILED', message: expect.stringContaining('no valid structured reply in 3 attempts') },
      });
      const plan = (await database.store.listSteps(session.id, { includePrompts: true })).find(
        (step) => step.key === 'plan',
      );
      expect(plan).toMatchObject({ status: 'failed', prompt: { user: expect.stringContaining(QUESTION) } });
      const started = (await database.store.readEvents(session.id)).find(
        (event) => event.type === 'step-start' && event.data.key === 'plan',
      );
      expect(started?.data).toMatchObject({ prompt: { model: 'openai-compatible:fake-model' } });
    });

    it('answers a follow-up with the report’s own citation numbers', async () => {
      const { session, output } = await research({ behavior: 'honor' });
      const config = testConfig(modelEnv());
      await askSession(localServiceContext(database.store, config), {
        sessionId: session.id,
        text: 'Where are tidal stations built?',
      });
      const result = await new Runner({
        store: database.store,
        workflows: createWorkflowRegistry(database.store, config),
        log: () => undefined,
      }).runSession(session.id);
      expect(result.status, JSON.stringify(result.error)).toBe('completed');
      const followUp = result.output as ResearchOutput;
      const text = followUp.answer ?? followUp.report!;
      expect(followUp.claims).toBeDefined();
      if (followUp.answer !== undefined) {
        // Each number the answer cites names the same source as in the report.
        for (const source of followUp.citations) {
          const inReport = output.citations.find((each) => each.url === source.url);
          if (inReport) expect(source.number).toBe(inReport.number);
        }
        for (const number of citedNumbers(text.split('**Sources**')[0]!))
          expect(followUp.citations.map((source) => source.number)).toContain(number);
      }
      expect(followUp.state).toBeDefined();
    });

    it('never repeats a completed model call after SIGKILL of the worker and a resume', async () => {
      server = await new FakeOpenAiServer(schemaFakeModel()).start();
      // Killed while it waits for its fifth model call.
      server.holdAfter(4);
      const env = modelEnv();
      const { session } = await startResearch(localServiceContext(database.store, testConfig(env)), {
        question: QUESTION,
        docs: [folder],
        settings: { model: 'openai-compatible:fake-model', maxIterations: 1, queriesPerIteration: 2 },
      });
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/research/testing/research-child.ts'], {
        cwd: projectRoot,
        env: {
          ...childEnv(env),
          QUARRY_HOME: mkdtempSync(join(tmpdir(), 'quarry-home-')),
          QUARRY_DB: database.location,
          SESSION_ID: session.id,
          // Short, so the killed worker's lease is soon over; long enough for a loaded machine to keep.
          LEASE_TTL_MS: String(within(500)),
        },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      await server.waitUntilHeld();
      child.kill('SIGKILL');
      await exited;
      server.release();
      const completed = (await database.store.listSteps(session.id, { includePrompts: true })).filter(
        (step) => step.kind === 'llm' && step.status === 'completed',
      );
      expect(completed.length).toBeGreaterThan(0);
      const callsBefore = server!.calls.length;
      await eventually(async () => (await database.store.getSession(session.id)).status === 'interrupted', 1_500);
      const result = await new Runner({
        store: database.store,
        workflows: createWorkflowRegistry(database.store, testConfig(env)),
        log: () => undefined,
      }).runSession(session.id);
      expect(result.status).toBe('completed');
      // No prompt of a completed step was sent again after the resume: a prompt went out again at most
      // once for each step sending it that had not completed before the kill.
      const doneBefore = new Set(completed.map((step) => step.key));
      const steps = await database.store.listSteps(session.id, { includePrompts: true });
      for (const tally of tallyPrompts(steps, server!.calls.slice(callsBefore))) {
        const done = tally.keys.filter((key) => doneBefore.has(key)).length;
        if (done > 0) expect(tally.sent, tally.keys.join(', ')).toBeLessThanOrEqual(tally.steps - done);
      }
    });
  });
}

describeModelResearch(sqliteHarness, null, true);
describeModelResearch(postgresHarness, postgresSkipReason(), false);
