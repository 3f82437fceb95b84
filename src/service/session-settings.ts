import { parseResearchSettings } from '../research/research-settings.ts';
import { QuarryError } from '../shared/errors.ts';
import type { Session } from '../store/store.ts';
import { checkModels } from './preflight.ts';
import { boundedSettings, requestSources, withinBudgetCeilings } from './research-request.ts';
import type { ServiceContext } from './service-context.ts';

export interface UpdateSessionRequest {
  sessionId: string;
  title?: string;
  /** Settings to change, merged into the session's; `null` removes one (back to its default). */
  settings?: Record<string, unknown>;
}

/**
 * Renames a session and changes its settings (model, system instruction, iterations, sources…),
 * validated as a new research's would be; they take effect on the next resume or follow-up. Settings
 * cannot change while the session runs. A refused change changes nothing.
 */
export async function updateSession(context: ServiceContext, request: UpdateSessionRequest): Promise<Session> {
  const session = await context.store.getSession(request.sessionId);
  if (request.settings === undefined) {
    return request.title === undefined ? session : context.store.updateSession(session.id, { title: request.title });
  }
  if (session.status === 'running') {
    throw new QuarryError(
      'SESSION_ALREADY_RUNNING',
      `Session ${session.id.slice(0, 8)} is running; change its settings once it has stopped or finished.`,
      { details: { sessionId: session.id } },
    );
  }
  // What the request sets is checked as a new research's settings are: a setting Quarry does not
  // have is refused, never stored (`null` removes one, back to its default).
  parseResearchSettings(Object.fromEntries(Object.entries(request.settings).filter(([, value]) => value !== null)), {
    strict: true,
  });
  const merged: Record<string, unknown> = { ...session.settings };
  for (const [key, value] of Object.entries(request.settings)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  if ('docs' in request.settings || 'search' in request.settings) {
    const docs = Array.isArray(merged.docs) ? (merged.docs as string[]) : [];
    const search = Array.isArray(merged.search) ? (merged.search as string[]) : [];
    Object.assign(merged, requestSources(context, { docs, search }));
    await context.indexer.ensure(merged.docs as string[]);
  }
  // A budget asked above the server's ceiling is refused; one removed goes back to the ceiling.
  const settings = context.enforceLimits
    ? withinBudgetCeilings(context, parseResearchSettings(merged))
    : parseResearchSettings(merged);
  checkModels(context, settings);
  return context.store.updateSession(session.id, {
    settings: boundedSettings(context, merged),
    ...(request.title === undefined ? {} : { title: request.title }),
  });
}
