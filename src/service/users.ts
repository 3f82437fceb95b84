import { createHash, randomBytes } from 'node:crypto';
import { QuarryError } from '../store/errors.ts';
import type { ApiToken, Store, User } from '../store/store.ts';
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

async function userNamed(store: Store, name: string): Promise<User> {
  const user = (await store.listUsers()).find((each) => each.name === name);
  if (!user) {
    throw new QuarryError('USER_NOT_FOUND', `No user named "${name}". List them with: quarry users ls.`, {
      details: { name },
    });
  }
  return user;
}

export async function addToken(store: Store, request: { name: string } & TokenOptions): Promise<NewToken> {
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
  store: Store,
  request: { name: string } & TokenOptions,
): Promise<NewToken & { user: User }> {
  const user = await store.createUser({ name: request.name });
  const token = await addToken(store, { ...request, label: request.label ?? 'created with the user' });
  return { user, ...token };
}

export function listUsers(store: Store): Promise<User[]> {
  return store.listUsers();
}

/** Removes a user and every token of theirs (their sessions stay). */
export async function removeUser(store: Store, name: string): Promise<User> {
  const user = await userNamed(store, name);
  await store.deleteUser(user.id);
  return user;
}

/** Tokens (one user's, or everyone's), with their user's name; never the tokens themselves. */
export async function listTokens(store: Store, name?: string): Promise<(ApiToken & { user: string })[]> {
  const users = await store.listUsers();
  const userId = name === undefined ? undefined : (await userNamed(store, name)).id;
  const names = new Map(users.map((user) => [user.id, user.name]));
  return (await store.listApiTokens(userId)).map((token) => ({
    ...token,
    user: names.get(token.userId) ?? token.userId,
  }));
}

export function revokeToken(store: Store, tokenId: string): Promise<void> {
  return store.deleteApiToken(tokenId);
}

/** The label of the short-lived tokens the web UI's sign-in makes (listed with the user's tokens). */
export const WEB_SIGN_IN_LABEL = 'web sign-in';
/** How long a browser's sign-in lasts at most (the cookie also ends with the browser session). */
export const WEB_SIGN_IN_MS = 7 * 24 * 3600 * 1000;

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

/**
 * A browser signs in with an API token and gets a token of its own: short-lived, labelled, and
 * revoked at sign-out, so the API token never sits in a cookie. The user's expired sign-ins go.
 */
export async function signInBrowser(store: Store, apiToken: string): Promise<{ user: User; token: string }> {
  const user = await store.findUserByTokenHash(sha256(apiToken));
  if (!user) throw new QuarryError('UNAUTHORIZED', 'The API token is not valid (or has expired, or was revoked).');
  const now = Date.now();
  for (const old of await store.listApiTokens(user.id)) {
    if (old.label === WEB_SIGN_IN_LABEL && old.expiresAt !== null && old.expiresAt <= now)
      await store.deleteApiToken(old.id).catch(() => undefined);
  }
  const token = `qry_${randomBytes(24).toString('base64url')}`;
  await store.addApiToken({
    userId: user.id,
    tokenHash: sha256(token),
    label: WEB_SIGN_IN_LABEL,
    expiresAt: now + WEB_SIGN_IN_MS,
  });
  return { user, token };
}

/** Ends a browser's sign-in: its token stops working at once. API tokens are never touched here. */
export async function signOutBrowser(store: Store, browserToken: string): Promise<void> {
  const user = await store.findUserByTokenHash(sha256(browserToken));
  if (!user) return;
  const id = sha256(browserToken).slice(0, 12);
  const record = (await store.listApiTokens(user.id)).find((each) => each.id === id);
  if (record?.label === WEB_SIGN_IN_LABEL) await store.deleteApiToken(id).catch(() => undefined);
}
