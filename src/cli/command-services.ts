/**
 * What the commands run, loaded when a command runs (`services()`), never at start: `quarry --help`
 * and a mistyped command load none of it (the configuration's and the store's schemas, the research
 * workflow, the drivers).
 */

export { packageRoot } from '../config/package-root.ts';
export { Runner } from '../engine/runner.ts';
export { checkWebProvider } from '../providers/search/create-search-providers.ts';
export { displayLocation } from '../research/citations.ts';
export { clarifyingQuestionsOf, clarifyingText } from '../research/clarify.ts';
export { parseResearchSettings } from '../research/research-settings.ts';
export { existingFolder } from '../service/document-folders.ts';
export { addToLibrary, discardIncoming, incomingFolder, listLibrary, removeFromLibrary } from '../service/library.ts';
export { listSessions } from '../service/list-sessions.ts';
export { migrateStore } from '../service/migrate-store.ts';
export { conversationWithExchanges, outlineOf, outlineText } from '../service/outline-question.ts';
export { LOCAL_OWNER } from '../service/service-context.ts';
export { forkSession, planResume, queueResume, stopSession } from '../service/session-control.ts';
export { exportSession, importSessionFile } from '../service/session-export.ts';
export {
  collectGarbage,
  deleteSession,
  listSessionSteps,
  renameSession,
  resolveSessionId,
  showSession,
} from '../service/session-queries.ts';
export { updateSession } from '../service/session-settings.ts';
export { shareSession, stopSharing } from '../service/share-links.ts';
export { askSession, startResearch } from '../service/start-research.ts';
export {
  addToken,
  addUser,
  adoptLocalSessions,
  listTokens,
  listUsers,
  removeUser,
  revokeToken,
} from '../service/users.ts';
export { openStore } from '../store/open-store.ts';
export { runInForeground } from './foreground.ts';
export { indexProgress } from './progress-bar.ts';
export { announceServer, runningServers } from './running-servers.ts';
