import { useState } from 'react';
import { clarifyingQuestionsOf } from '../../../src/research/clarify.ts';
import type { Outline } from '../../../src/research/research-types.ts';
import { api, type SessionDetail } from '../api-client.ts';

/** Shown while the session waits for a person: clarifying questions before research, or the outline to review. */
export function OutlineReview({
  sessionId,
  pending,
  onAnswered,
}: {
  sessionId: string;
  pending: NonNullable<SessionDetail['pendingInput']>;
  onAnswered: () => void;
}) {
  const [feedback, setFeedback] = useState('');
  const [error, setError] = useState<string | null>(null);
  const outline = (pending.payload as { outline?: Outline } | null)?.outline;
  const questions = clarifyingQuestionsOf(pending.payload);
  async function answer(text: string) {
    setError(null);
    try {
      await api.send(sessionId, text);
      setFeedback('');
      onAnswered();
    } catch (caught) {
      setError((caught as Error).message);
    }
  }
  if (questions)
    return (
      <section className="banner" aria-label="Clarifying questions">
        <h2>A few questions first</h2>
        <ol>
          {questions.map((question, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the questions are fixed once asked; their order is their identity
            <li key={index}>{question}</li>
          ))}
        </ol>
        <label>
          Your answers
          <textarea rows={3} value={feedback} onChange={(event) => setFeedback(event.target.value)} />
        </label>
        <button type="button" className="primary" disabled={!feedback.trim()} onClick={() => void answer(feedback)}>
          Answer and start
        </button>
        <button type="button" onClick={() => void answer('skip')}>
          Skip: research it as asked
        </button>
        <Failure error={error} />
      </section>
    );
  return (
    <section className="banner" aria-label="Outline review">
      <h2>Review the outline</h2>
      {outline && (
        <ol>
          {outline.sections.map((section, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: sections have no id; their order is their identity
            <li key={index}>
              <strong>{section.title}</strong> <span className="muted">{section.focus}</span>
            </li>
          ))}
        </ol>
      )}
      <button type="button" className="primary" onClick={() => void answer('approve')}>
        Approve
      </button>
      <label>
        Or say what to change
        <textarea rows={2} value={feedback} onChange={(event) => setFeedback(event.target.value)} />
      </label>
      <button type="button" disabled={!feedback.trim()} onClick={() => void answer(feedback)}>
        Send feedback
      </button>
      <Failure error={error} />
    </section>
  );
}

/** Why sending the answer failed, when it did. */
function Failure({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}
