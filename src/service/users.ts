import { createHash, randomBytes } from 'node:crypto';
import { QuarryError } from '../shared/errors.ts';
import type { Accounts, ApiToken, User } from '../store/store.ts';
import { LOCAL_OWNER } from './service-context.ts';
import { parseDuration } from './session-queries.ts';

/**
 * API users and their tokens (an operator's job, from the CLI). A token is shown once, when it is
 * made; the store keeps only its sha-256. A user may have several, each with an optional expiry,
 * listed and revoked one at a time.
 */

export interface NewToken {
  /** The token itself: shown now, never again. */
  token: string;
  record: ApiToken;
}

export interface TokenOptions {
  /** A duration (`30d`, `12h`); the token stops working after it. */
  expiresIn?: string;
  label?: string;
}

/** The user called `name`; `USER_NOT_FOUND` naming how to list them when there is none. */
export async function userNamed(store: Accounts, name: string): Promise<User> {
  const user = (await store.listUsers()).find((each) => each.name === name);
  if (!user) {
    throw new QuarryError('USER_NOT_FOUND', `No user named "${name}". List them with: quarry users ls.`, {
      details: { name },
    });
  }
  return user;
}

export async function addToken(store: Accounts, request: { name: string } & TokenOptions): Promise<NewToken> {
  const user = await userNamed(store, request.name);
  const expiresAt = request.expiresIn ? Date.now() + parseDuration(request.expiresIn, '--expires') : null;
  const token = `qry_${randomBytes(24).toString('base64url')}`;
  const record = await store.addApiToken({
    userId: user.id,
    tokenHash: createHash('sha256').update(token).digest('hex'),
    label: request.label,
    expiresAt,
  });
  return { token, record };
}

/** A new user with a first token. */
export async function addUser(
  store: Accounts,
  request: { name: string } & TokenOptions,
): Promise<NewToken & { user: User }> {
  const user = await store.createUser({ name: request.name });
  const token = await addToken(store, { ...request, label: request.label ?? 'created with the user' });
  return { user, ...token };
}

/**
 * Hands every session of the local user (made while the store had no users, on the command line or
 * a loopback server) to the user called `name`: once a store has users, a server shows the local
 * user's sessions to no one.
 */
export async function adoptLocalSessions(
  store: Accounts,
  name: string,
): Promise<{ user: User; adopted: number; kept: number; threads: number }> {
  const user = await userNamed(store, name);
  return { user, ...(await store.adoptSessions({ fromOwnerId: LOCAL_OWNER, toUserId: user.id })) };
}

export function listUsers(store: Accounts): Promise<User[]> {
  return store.listUsers();
}

/** Removes a user and every token of theirs (their sessions stay). */
export async function removeUser(store: Accounts, name: string): Promise<User> {
  const user = await userNamed(store, name);
  await store.deleteUser(user.id);
  return user;
}

/** Tokens (one user's, or everyone's), with their user's name; never the tokens themselves. */
export async function listTokens(store: Accounts, name?: string): Promise<(ApiToken & { user: string })[]> {
  const users = await store.listUsers();
  const userId = name === undefined ? undefined : (await userNamed(store, name)).id;
  const names = new Map(users.map((user) => [user.id, user.name]));
  return (await store.listApiTokens(userId)).map((token) => ({
    ...token,
    user: names.get(token.userId) ?? token.userId,
  }));
}

export function revokeToken(store: Accounts, tokenId: string): Promise<void> {
  return store.deleteApiToken(tokenId);
}

/** The label of the short-lived tokens the web UI's sign-in makes (listed with the user's tokens). */
export const WEB_SIGN_IN_LABEL = 'web sign-in';
/** How long a browser's sign-in lasts at most (never longer than the API token it came from). */
export const WEB_SIGN_IN_MS = 7 * 24 * 3600 * 1000;
/** Sign-ins kept per API token: signing in again past this drops the oldest. */
export const MAX_SIGN_INS_PER_TOKEN = 10;

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

const notValid = () => new QuarryError('UNAUTHORIZED', 'The API token is not valid (or has expired, or was revoked).');

/**
 * A browser signs in with an API token and gets a token of its own, minted from it: short-lived,
 * labelled, revoked at sign-out and with the API token, so the API token never sits in a cookie.
 * A sign-in token cannot sign in again (it would renew itself forever). Expired sign-ins of the
 * user go, and so do the oldest of this API token's beyond `MAX_SIGN_INS_PER_TOKEN`.
 */
export async function signInBrowser(
  store: Accounts,
  apiToken: string,
): Promise<{ user: User; token: string; expiresAt: number }> {
  const found = await store.findToken(sha256(apiToken));
  if (!found || found.token.parentId !== null) throw notValid();
  const { user, token: parent } = found;
  const now = Date.now();
  const signIns = (await store.listApiTokens(user.id)).filter((token) => token.parentId !== null);
  const expired = signIns.filter((token) => token.expiresAt !== null && token.expiresAt <= now);
  const siblings = signIns.filter((token) => token.parentId === parent.id && !expired.includes(token));
  // Newest first: keep room for the new one.
  for (const old of [...expired, ...siblings.slice(MAX_SIGN_INS_PER_TOKEN - 1)])
    await store.deleteApiToken(old.id).catch(() => undefined);
  const token = `qry_${randomBytes(24).toString('base64url')}`;
  const record = await store.addApiToken({
    userId: user.id,
    tokenHash: sha256(token),
    label: WEB_SIGN_IN_LABEL,
    expiresAt: now + WEB_SIGN_IN_MS,
    parentId: parent.id,
  });
  return { user, token, expiresAt: record.expiresAt ?? now + WEB_SIGN_IN_MS };
}

/** Ends a browser's sign-in: its token stops working at once. API tokens are never touched here. */
export async function signOutBrowser(store: Accounts, browserToken: string): Promise<void> {
  const found = await store.findToken(sha256(browserToken));
  if (found && found.token.parentId !== null) await store.deleteApiToken(found.token.id).catch(() => undefined);
}
