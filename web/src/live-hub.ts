import type { WireEvent } from '../../src/shared/events.ts';
import { announceConnection, api, type SessionSummary } from './api-client.ts';

export type FeedChange =
  | { type: 'session'; session: SessionSummary }
  | { type: 'session-delete'; id: string }
  /** The stream is back after a drop: what changed meanwhile was not pushed; look again. */
  | { type: 'reconnect' };

/** What the tabs of one browser say to each other. */
type TabMessage =
  /** A tab follows these sessions, each from the offset it has. */
  | { kind: 'want'; tab: string; sessions: Record<string, number> }
  | { kind: 'bye'; tab: string }
  /** A new leader asks every tab what it follows. */
  | { kind: 'roll-call' }
  | { kind: 'event'; sessionId: string; event: WireEvent }
  | { kind: 'feed'; change: FeedChange }
  | { kind: 'online'; online: boolean };

const CHANNEL = 'quarry-live';
const LEADER_LOCK = 'quarry-live-leader';
/** How long a replaced stream stays open after its successor is ready: longer than the feed's batching. */
const RETIRE_AFTER_MS = 1_000;
/** Subscriptions arriving together (a page mounting) open one stream, not several. */
const REOPEN_DELAY_MS = 30;

/**
 * One event stream per browser, not per tab: the browser allows six connections to a host, and
 * each tab used to hold two. The tab holding a Web Lock leads: it opens `GET /api/sessions/live`
 * with every session any tab follows and relays what comes to the others over a BroadcastChannel.
 * When it closes, the lock passes to another tab, which asks every tab what it follows and opens
 * the stream again from the offsets they have. Without Web Locks or BroadcastChannel each tab leads
 * itself (one connection per tab). Events may come twice (a reopened stream replays from the lowest
 * offset any tab has); followers drop what they have seen by offset.
 */
class LiveHub {
  private readonly tab = crypto.randomUUID();
  private readonly channel: BroadcastChannel | null =
    typeof BroadcastChannel === 'function' ? new BroadcastChannel(CHANNEL) : null;
  private readonly sessionListeners = new Map<string, Set<(event: WireEvent) => void>>();
  private readonly feedListeners = new Set<(change: FeedChange) => void>();
  private readonly connectionListeners = new Set<(online: boolean) => void>();
  /** The highest offset this tab has handed on, per followed session. */
  private readonly seen = new Map<string, number>();
  private online = false;

  // The leader's state.
  private leading = false;
  /** What each tab follows, from which offset (raised as events are relayed). */
  private readonly wants = new Map<string, Map<string, number>>();
  private source: EventSource | null = null;
  /** Streams replaced by a newer one, closed once it is ready. */
  private readonly retiring = new Set<EventSource>();
  /** How far the open stream has come, per session it follows. */
  private readonly reached = new Map<string, number>();
  private reopenTimer: ReturnType<typeof setTimeout> | null = null;
  private dropped = false;

  constructor() {
    this.channel?.addEventListener('message', (message: MessageEvent<TabMessage>) => this.receive(message.data));
    window.addEventListener('pagehide', () => this.post({ kind: 'bye', tab: this.tab }));
    window.addEventListener('pageshow', (event) => event.persisted && this.announce());
    if (this.channel && navigator.locks)
      void navigator.locks.request(LEADER_LOCK, () => {
        this.lead();
        // Held for the life of the tab.
        return new Promise<never>(() => undefined);
      });
    else this.lead();
  }

  /** A session's events from the start, then live; returns the unsubscribe. */
  followSession(sessionId: string, onEvent: (event: WireEvent) => void): () => void {
    const listeners = this.sessionListeners.get(sessionId) ?? new Set();
    this.sessionListeners.set(sessionId, listeners);
    listeners.add(onEvent);
    // A new follower wants the history: from 0 for this tab.
    this.seen.set(sessionId, 0);
    this.announce();
    return () => {
      listeners.delete(onEvent);
      if (listeners.size === 0) {
        this.sessionListeners.delete(sessionId);
        this.seen.delete(sessionId);
        this.announce();
      }
    };
  }

  followFeed(onChange: (change: FeedChange) => void): () => void {
    this.feedListeners.add(onChange);
    // A stream closed for good (a 401 before signing in again) opens again for a new follower.
    if (this.leading && (!this.source || this.source.readyState === EventSource.CLOSED)) this.scheduleReopen();
    return () => this.feedListeners.delete(onChange);
  }

  /** Whether the stream is open, now and as it changes; returns the unsubscribe. */
  followConnection(onChange: (online: boolean) => void): () => void {
    this.connectionListeners.add(onChange);
    onChange(this.online);
    return () => this.connectionListeners.delete(onChange);
  }

  private post(message: TabMessage): void {
    this.channel?.postMessage(message);
  }

  /** Tells the leader what this tab follows (the leader tells itself). */
  private announce(): void {
    const message: TabMessage = { kind: 'want', tab: this.tab, sessions: Object.fromEntries(this.seen) };
    if (this.leading) this.receive(message);
    else this.post(message);
  }

  private receive(message: TabMessage): void {
    switch (message.kind) {
      case 'event':
        this.deliver(message.sessionId, message.event);
        break;
      case 'feed':
        for (const listener of this.feedListeners) listener(message.change);
        break;
      case 'online':
        this.setOnline(message.online);
        break;
      case 'roll-call':
        this.announce();
        break;
      case 'want':
        if (!this.leading) break;
        this.wants.set(message.tab, new Map(Object.entries(message.sessions)));
        // A tab that just joined learns whether the stream is open.
        if (message.tab !== this.tab) this.post({ kind: 'online', online: this.online });
        this.scheduleReopen();
        break;
      case 'bye':
        if (this.leading && this.wants.delete(message.tab)) this.scheduleReopen();
        break;
    }
  }

  private deliver(sessionId: string, event: WireEvent): void {
    const seen = this.seen.get(sessionId);
    if (seen === undefined || event.offset <= seen) return;
    this.seen.set(sessionId, event.offset);
    for (const listener of this.sessionListeners.get(sessionId) ?? []) listener(event);
  }

  private setOnline(online: boolean): void {
    if (online === this.online) return;
    this.online = online;
    announceConnection(online);
    for (const listener of this.connectionListeners) listener(online);
  }

  private lead(): void {
    this.leading = true;
    // Changes made while no tab held a stream (the last leader closing) were pushed to nobody: once
    // the stream is open, every tab looks again.
    this.dropped = true;
    this.post({ kind: 'roll-call' });
    this.announce();
  }

  /** The sessions any tab follows, each from the lowest offset a tab has. */
  private watched(): Map<string, number> {
    const watched = new Map<string, number>();
    for (const sessions of this.wants.values())
      for (const [sessionId, offset] of sessions)
        watched.set(sessionId, Math.min(watched.get(sessionId) ?? Number.POSITIVE_INFINITY, offset));
    return watched;
  }

  private scheduleReopen(): void {
    if (this.reopenTimer) return;
    this.reopenTimer = setTimeout(() => {
      this.reopenTimer = null;
      this.reopen();
    }, REOPEN_DELAY_MS);
  }

  /** Opens the stream again when what is followed changed, or a tab needs an earlier offset. */
  private reopen(): void {
    const watched = this.watched();
    const same =
      watched.size === this.reached.size &&
      [...watched].every(([sessionId, offset]) => offset >= (this.reached.get(sessionId) ?? Number.POSITIVE_INFINITY));
    if (this.source && this.source.readyState !== EventSource.CLOSED && same) return;
    // Older streams stay open until the new one is ready and a moment more (the server gathers
    // feed changes for a quarter second), so no change falls between them: the feed has no
    // replay. What two streams carry is seen twice; changes and events are idempotent.
    const older = [...this.retiring, ...(this.source ? [this.source] : [])];
    for (const each of older) this.retiring.add(each);
    this.reached.clear();
    for (const [sessionId, offset] of watched) this.reached.set(sessionId, offset);
    const source = new EventSource(api.liveUrl(watched));
    this.source = source;
    const relay = (message: TabMessage) => {
      this.post(message);
      this.receive(message);
    };
    source.addEventListener('ready', () =>
      setTimeout(() => {
        for (const each of older) {
          each.close();
          this.retiring.delete(each);
        }
      }, RETIRE_AFTER_MS),
    );
    source.addEventListener('session-event', (message) => {
      const { sessionId, event } = JSON.parse((message as MessageEvent<string>).data) as {
        sessionId: string;
        event: WireEvent;
      };
      // Relayed to every tab: the next reopen starts each one from here.
      this.reached.set(sessionId, Math.max(this.reached.get(sessionId) ?? 0, event.offset));
      for (const sessions of this.wants.values())
        if (sessions.has(sessionId)) sessions.set(sessionId, Math.max(sessions.get(sessionId)!, event.offset));
      relay({ kind: 'event', sessionId, event });
    });
    source.addEventListener('session', (message) =>
      relay({
        kind: 'feed',
        change: { type: 'session', session: JSON.parse((message as MessageEvent<string>).data) as SessionSummary },
      }),
    );
    source.addEventListener('session-delete', (message) =>
      relay({
        kind: 'feed',
        change: {
          type: 'session-delete',
          id: (JSON.parse((message as MessageEvent<string>).data) as { id: string }).id,
        },
      }),
    );
    source.onopen = () => {
      relay({ kind: 'online', online: true });
      if (this.dropped) relay({ kind: 'feed', change: { type: 'reconnect' } });
      this.dropped = false;
    };
    source.onerror = () => {
      if (source !== this.source) return;
      this.dropped = true;
      // Closed for good (a 401): not a connection problem, and not retried until something asks.
      if (source.readyState !== EventSource.CLOSED) relay({ kind: 'online', online: false });
    };
  }
}

let hub: LiveHub | null = null;

/** This tab's end of the browser's one live stream. */
export function liveHub(): LiveHub {
  hub ??= new LiveHub();
  return hub;
}
