import { reportOperation } from '../shared/operations.ts';

/**
 * Reports how long an event took from its commit to a client's stream, on every streaming surface
 * (the web UI's live stream, event streams, chat, Responses, MCP progress): the store's clock against
 * this process's. A replayed old event says nothing about lag and is not counted.
 */
export function reportDelivered(createdAt: number): void {
  const lagMs = Date.now() - createdAt;
  if (lagMs >= 0 && lagMs < 60_000) reportOperation({ type: 'event-delivered', lagMs });
}
