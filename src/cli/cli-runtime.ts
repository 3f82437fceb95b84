import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';
import { LOCAL_OWNER, type ServiceContext } from '../service/service-context.ts';

/** What commands share: global options and the store, opened on first use and closed at exit. */
export class CliRuntime {
  json = false;
  db: string | undefined;
  private store: Store | null = null;

  async open(): Promise<ServiceContext> {
    this.store ??= await openStore({ db: this.db });
    return { store: this.store, ownerId: LOCAL_OWNER };
  }

  async close(): Promise<void> {
    await this.store?.close();
    this.store = null;
  }
}
