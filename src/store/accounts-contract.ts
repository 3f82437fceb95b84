import * as z from 'zod';
import { optional } from 'zod';
import { id, int, maybe, nonEmpty, sha256Hex, text } from './schema-parts.ts';
import type { CheckedTable, SchemaTable } from './schema-table.ts';

/**
 * Users and their API tokens: the accounts' part of the store's contract (`Store` extends
 * `Accounts`), with each operation's argument schemas, which the validating store applies in front
 * of every backend.
 */

export interface User {
  id: string;
  name: string;
  createdAt: number;
}

/** An API token as listings show it: never the token, nor its hash. */
export interface ApiToken {
  /** Short id for listing and revoking. */
  id: string;
  userId: string;
  label: string | null;
  createdAt: number;
  /** Null: it never expires. */
  expiresAt: number | null;
  /** The token this one was minted from (a browser sign-in's API token); revoking it revokes this one. */
  parentId: string | null;
}

/** Users and their API tokens. */
export interface Accounts {
  createUser(input: { id?: string; name: string }): Promise<User>;
  listUsers(): Promise<User[]>;
  /** Whether any user exists (a server on loopback serves its one local user only while none does). */
  hasUsers(): Promise<boolean>;
  /** Removes the user and their tokens (not their sessions). */
  deleteUser(userId: string): Promise<void>;
  /**
   * Hands every session of `fromOwnerId` (the local user's, made before sign-in was required) to the
   * user `toUserId`, in one transaction; a session whose external id that user already uses stays
   * (`kept`), and so does a LangGraph thread (`threads`, counted in `kept` too): the app's
   * QuarrySaver finds its threads as that owner's. `USER_NOT_FOUND` when there is no such user.
   */
  adoptSessions(input: {
    fromOwnerId: string;
    toUserId: string;
  }): Promise<{ adopted: number; kept: number; threads: number }>;
  /**
   * Stores a token's hash (never the token), with an optional expiry (ms since the epoch) and the
   * token it was minted from (`parentId`: it must exist, belong to the same user and have no parent
   * itself, else `TOKEN_NOT_FOUND`; it cannot outlive it either: its expiry is capped at the parent's).
   */
  addApiToken(input: {
    userId: string;
    tokenHash: string;
    label?: string;
    expiresAt?: number | null;
    parentId?: string;
  }): Promise<ApiToken>;
  /** A user's tokens (all users' when omitted), newest first. */
  listApiTokens(userId?: string): Promise<ApiToken[]>;
  /**
   * Revokes one token and every token minted from it, in one transaction; `TOKEN_NOT_FOUND` when
   * there is none with that id.
   */
  deleteApiToken(tokenId: string): Promise<void>;
  /** The unexpired token with this hash (database clock) and its user, or null. */
  findToken(tokenHash: string): Promise<{ user: User; token: ApiToken } | null>;
}

/** The account operations' argument schemas, one per positional argument (see `validating-store.ts`). */
export const accountSchemas = {
  createUser: [
    z.object({
      id: optional(id()),
      name: nonEmpty(100).check(z.regex(/^[\w.@-]+$/, 'may contain letters, digits, "_", ".", "@" and "-"')),
    }),
  ],
  deleteUser: [id()],
  adoptSessions: [z.object({ fromOwnerId: id(), toUserId: id() })],
  addApiToken: [
    z.object({
      userId: id(),
      tokenHash: sha256Hex('must be a sha-256 hex digest'),
      label: optional(text(200)),
      expiresAt: maybe(int(0)),
      parentId: optional(nonEmpty(64)),
    }),
  ],
  listApiTokens: [optional(id())],
  deleteApiToken: [nonEmpty(64)],
  findToken: [text(128)],
  listUsers: [],
  hasUsers: [],
} as const satisfies SchemaTable<Accounts>;

/** Each schema checked against its operation's signature: a missing or drifting one does not compile. */
const checkedAgainstAccounts: CheckedTable<Accounts, typeof accountSchemas> = accountSchemas;
void checkedAgainstAccounts;
