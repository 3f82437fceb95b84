import { type FormEvent, useState } from 'react';
import { api, type Message } from '../api-client.ts';

/** The conversation, with a box for follow-up questions. */
export function Conversation({
  sessionId,
  messages,
  canAsk,
  onSent,
}: {
  sessionId: string;
  messages: Message[];
  canAsk: boolean;
  onSent: () => void;
}) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  async function send(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      await api.send(sessionId, text);
      setText('');
      onSent();
    } catch (caught) {
      setError((caught as Error).message);
    }
  }
  return (
    <div className="conversation">
      <ol>
        {messages.map((message) => (
          <li key={message.id} className={`message ${message.role}`}>
            <span className="muted small">{message.role}</span>
            <div className="content">
              {message.content.length > 600 ? `${message.content.slice(0, 600)}…` : message.content}
            </div>
          </li>
        ))}
      </ol>
      <form onSubmit={(event) => void send(event)}>
        <label>
          Follow-up question
          <textarea
            rows={2}
            value={text}
            onChange={(event) => setText(event.target.value)}
            disabled={!canAsk}
            placeholder={canAsk ? 'Ask about the report…' : 'Available once the run has finished'}
          />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={!canAsk || !text.trim()}>
          Ask
        </button>
      </form>
    </div>
  );
}
