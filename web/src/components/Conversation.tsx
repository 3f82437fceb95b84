import { type KeyboardEvent, type MouseEvent, useState } from 'react';
import { api, type Message } from '../api-client.ts';
import { renderMessage } from '../render-report.ts';
import { copyText } from './Report.tsx';

/**
 * The conversation under the report: the whole history (answers as Markdown, each citing its own
 * sources by its own numbers), and a box for the next question: Enter sends, Shift+Enter starts a
 * new line.
 */
export function Conversation({
  sessionId,
  messages,
  canAsk,
  hasReport,
  online,
  onSent,
  onCite,
}: {
  sessionId: string;
  /** The conversation after the question, without the reports (shown above it). */
  messages: Message[];
  canAsk: boolean;
  /** Whether a run has written a report yet (a follow-up asks about one). */
  hasReport: boolean;
  online: boolean;
  onSent: () => void;
  /** A citation of the answer `answer` (its message id) was opened. */
  onCite: (number: number, answer: string) => void;
}) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const [copied, setCopied] = useState<string | null>(null);
  const history = messages;

  async function send() {
    if (!text.trim() || sending) return;
    setSending(true);
    setError(null);
    try {
      await api.send(sessionId, text.trim());
      setText('');
      onSent();
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setSending(false);
    }
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  }

  async function copy(text: string, what: string) {
    setCopied((await copyText(text)) ? `Copied ${what}.` : 'The browser did not allow copying.');
  }

  function onClick(event: MouseEvent<HTMLElement>, answer: string) {
    const button = (event.target as HTMLElement).closest('button');
    if (button?.dataset.copyCode !== undefined) {
      void copy(button?.parentElement?.querySelector('pre')?.textContent ?? '', 'the code');
      return;
    }
    const number = Number(button?.dataset.citation);
    if (number) onCite(number, answer);
  }

  return (
    <section className="conversation" aria-label="Conversation">
      <h2>Conversation</h2>
      {history.length === 0 && <p className="muted">Ask a follow-up question about the report.</p>}
      {copied && (
        <p className="muted" role="status">
          {copied}
        </p>
      )}
      <ol>
        {history.map((message) => (
          <li key={message.id} className={`message ${message.role}`} data-message={message.id}>
            <span className="muted small">{message.role === 'user' ? 'You' : 'Quarry'}</span>
            {message.role === 'assistant' && (
              <button
                type="button"
                className="copy small"
                aria-label="Copy this answer as Markdown"
                onClick={() => void copy(message.content, 'the answer as Markdown')}
              >
                Copy
              </button>
            )}
            {message.role === 'assistant' ? (
              // biome-ignore lint/a11y/noStaticElementInteractions: citation buttons inside handle keys themselves
              // biome-ignore lint/a11y/useKeyWithClickEvents: citation buttons inside handle keys themselves
              <div
                className="content"
                onClick={(event) => onClick(event, message.id)}
                // biome-ignore lint/security/noDangerouslySetInnerHtml: renderMessage escapes any HTML in the Markdown
                dangerouslySetInnerHTML={{
                  // Only the answer's own numbers open anything: never another text's source.
                  __html: renderMessage(message.content, new Set((message.citations ?? []).map((each) => each.number))),
                }}
              />
            ) : (
              <div className="content">{message.content}</div>
            )}
          </li>
        ))}
      </ol>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        <label>
          Follow-up question
          <textarea
            id="follow-up"
            rows={2}
            value={text}
            onChange={(event) => setText(event.target.value)}
            onKeyDown={onKeyDown}
            disabled={!canAsk || !online}
            placeholder={
              canAsk
                ? 'Ask about the report (Enter sends, Shift+Enter for a new line)'
                : hasReport
                  ? 'Available once the run has finished'
                  : 'Available once the research has a report (resume it to write one)'
            }
          />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={!canAsk || !online || sending || !text.trim()}>
          {sending ? 'Sending…' : 'Ask'}
        </button>
      </form>
    </section>
  );
}
