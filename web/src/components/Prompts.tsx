import { useEffect, useState } from 'react';
import { api, type Step } from '../api-client.ts';

/** One card per LLM step; a card loads its prompt only when opened. */
export function PromptCard({ sessionId, step }: { sessionId: string; step: Step }) {
  const [detail, setDetail] = useState<Step | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <details
      className="prompt"
      onToggle={(event) => {
        if ((event.target as HTMLDetailsElement).open && !detail)
          api.step(sessionId, step.runId, step.key).then(setDetail, (caught: Error) => setError(caught.message));
      }}
    >
      <summary>
        {step.phase} · {step.key} · {step.usage?.model ?? 'model'} ·{' '}
        {(step.usage?.inputTokens ?? 0) + (step.usage?.outputTokens ?? 0)} tokens
        {step.status !== 'completed' && <span className={`badge ${step.status}`}> {step.status}</span>}
      </summary>
      {/* A failed call says why, before its prompt (what it sent is what to look at next). */}
      {step.error && (
        <p className="error">
          Failed after {step.attempts} {step.attempts === 1 ? 'attempt' : 'attempts'}: {step.error.message}
        </p>
      )}
      {error && <p className="error">{error}</p>}
      {!detail && !error && <p className="muted">Loading…</p>}
      {detail && (
        <>
          <h4>System</h4>
          <pre>{detail.prompt?.system ?? ''}</pre>
          <h4>User input</h4>
          <pre>{detail.prompt?.user ?? ''}</pre>
          <h4>Output</h4>
          {detail.status === 'completed' ? (
            <pre>{JSON.stringify(detail.output, null, 2)}</pre>
          ) : (
            <p className="muted">
              None: the call {detail.status === 'running' ? 'has not finished' : 'did not complete'}.
            </p>
          )}
        </>
      )}
    </details>
  );
}

export function Prompts({ sessionId, version }: { sessionId: string; version: number }) {
  const [steps, setSteps] = useState<Step[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new report version means new steps to load
  useEffect(() => {
    api.steps(sessionId).then(
      (result) => setSteps(result.steps.filter((step) => step.kind === 'llm')),
      (caught: Error) => setError(caught.message),
    );
  }, [sessionId, version]);
  if (error) return <p className="error">{error}</p>;
  if (!steps) return <p className="muted">Loading…</p>;
  if (steps.length === 0) return <p className="muted">No LLM steps: this session uses the extractive analyst.</p>;
  return (
    <div>
      {steps.map((step) => (
        <PromptCard key={`${step.runId}/${step.key}`} sessionId={sessionId} step={step} />
      ))}
    </div>
  );
}
