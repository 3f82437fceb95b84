import type { Store } from '../store/store.ts';

/** What every service operation receives: the store and the user on whose behalf it acts. */
export interface ServiceContext {
  store: Store;
  /** The acting user; every read and write is scoped to their sessions. `local` when there are no users. */
  ownerId: string;
}

export const LOCAL_OWNER = 'local';
