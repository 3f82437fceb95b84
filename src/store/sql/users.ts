import { QuarryError } from '../../shared/errors.ts';
import type { ApiToken, User } from '../store.ts';
import { newId } from './codec.ts';
import type { SqlContext } from './context.ts';

type Row = Record<string, unknown>;

const toUser = (row: Row): User => ({ id: String(row.id), name: String(row.name), createdAt: Number(row.created_at) });

function userNotFound(userId: string): QuarryError {
  return new QuarryError('USER_NOT_FOUND', `No user with id "${userId}".`, { details: { userId } });
}

export async function createUser(ctx: SqlContext, input: { id?: string; name: string }): Promise<User> {
  return ctx.driver.transaction(async (tx) => {
    const taken = await tx.query('SELECT id FROM users WHERE name = ?', [input.name]);
    if (taken.length > 0)
      throw new QuarryError('CONFLICT', `A user named "${input.name}" already exists.`, { details: { field: 'name' } });
    const rows = await tx.query(`INSERT INTO users (id, name, created_at) VALUES (?, ?, ${ctx.now}) RETURNING *`, [
      input.id ?? newId(),
      input.name,
    ]);
    return toUser(rows[0]!);
  });
}

export async function listUsers(ctx: SqlContext): Promise<User[]> {
  return (await ctx.driver.query('SELECT * FROM users ORDER BY name')).map(toUser);
}

export async function hasUsers(ctx: SqlContext): Promise<boolean> {
  return (await ctx.driver.query('SELECT 1 AS one FROM users LIMIT 1')).length > 0;
}

export async function deleteUser(ctx: SqlContext, userId: string): Promise<void> {
  await ctx.driver.transaction(async (tx) => {
    await tx.query('DELETE FROM api_tokens WHERE user_id = ?', [userId]);
    // Their share links die with them: a removed user's reports are no one's to show (issue 44).
    await tx.query('DELETE FROM share_links WHERE session_id IN (SELECT id FROM sessions WHERE owner_id = ?)', [
      userId,
    ]);
    const deleted = await tx.query('DELETE FROM users WHERE id = ? RETURNING id', [userId]);
    if (deleted.length === 0) throw userNotFound(userId);
  });
}

export async function adoptSessions(
  ctx: SqlContext,
  input: { fromOwnerId: string; toUserId: string },
): Promise<{ adopted: number; kept: number; threads: number }> {
  return ctx.driver.transaction(async (tx) => {
    const user = await tx.query(`SELECT id FROM users WHERE id = ?${ctx.driver.dialect.rowLock}`, [input.toUserId]);
    if (user.length === 0) throw userNotFound(input.toUserId);
    // An external id is unique per owner: a session whose id the user already uses cannot join them.
    // A LangGraph thread stays where the app's saver looks for it (moved, the graph would start over).
    const adopted = await tx.query(
      `UPDATE sessions SET owner_id = ? WHERE owner_id = ? AND workflow_name <> 'langgraph' AND (external_id IS NULL OR external_id NOT IN
         (SELECT external_id FROM sessions WHERE owner_id = ? AND external_id IS NOT NULL)) RETURNING id`,
      [input.toUserId, input.fromOwnerId, input.toUserId],
    );
    const [kept] = await tx.query(
      `SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN workflow_name = 'langgraph' THEN 1 ELSE 0 END), 0) AS threads
       FROM sessions WHERE owner_id = ?`,
      [input.fromOwnerId],
    );
    return { adopted: adopted.length, kept: Number(kept?.n ?? 0), threads: Number(kept?.threads ?? 0) };
  });
}

const toToken = (row: Row): ApiToken => ({
  id: String(row.id),
  userId: String(row.user_id),
  label: (row.label as string | null) ?? null,
  createdAt: Number(row.created_at),
  expiresAt: row.expires_at === null || row.expires_at === undefined ? null : Number(row.expires_at),
  parentId: (row.parent_id as string | null) ?? null,
});

const tokenColumns = 'id, user_id, label, created_at, expires_at, parent_id';

function tokenNotFound(tokenId: string): QuarryError {
  return new QuarryError(
    'TOKEN_NOT_FOUND',
    `No API token with id "${tokenId}". List them with: quarry users token ls.`,
    {
      details: { tokenId },
    },
  );
}

export async function addApiToken(
  ctx: SqlContext,
  input: { userId: string; tokenHash: string; label?: string; expiresAt?: number | null; parentId?: string },
): Promise<ApiToken> {
  return ctx.driver.transaction(async (tx) => {
    const user = await tx.query('SELECT id FROM users WHERE id = ?', [input.userId]);
    if (user.length === 0) throw userNotFound(input.userId);
    let expiresAt = input.expiresAt ?? null;
    if (input.parentId !== undefined) {
      // A minted token answers to a root token of the same user, and never outlives it. The parent
      // is locked until the child is written: a revocation racing the sign-in either comes first
      // (and there is no parent to mint from) or waits and then removes the child too (issue 44).
      const [parent] = await tx.query(
        `SELECT expires_at FROM api_tokens WHERE id = ? AND user_id = ? AND parent_id IS NULL${ctx.driver.dialect.rowLock}`,
        [input.parentId, input.userId],
      );
      if (!parent) throw tokenNotFound(input.parentId);
      const parentExpiry = parent.expires_at === null ? null : Number(parent.expires_at);
      if (parentExpiry !== null) expiresAt = expiresAt === null ? parentExpiry : Math.min(expiresAt, parentExpiry);
    }
    const [row] = await tx.query(
      `INSERT INTO api_tokens (id, token_hash, user_id, label, expires_at, parent_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ${ctx.now}) RETURNING ${tokenColumns}`,
      [
        input.tokenHash.slice(0, 12),
        input.tokenHash,
        input.userId,
        input.label ?? null,
        expiresAt,
        input.parentId ?? null,
      ],
    );
    return toToken(row!);
  });
}

export async function listApiTokens(ctx: SqlContext, userId?: string): Promise<ApiToken[]> {
  const rows = await ctx.driver.query(
    `SELECT ${tokenColumns} FROM api_tokens${userId === undefined ? '' : ' WHERE user_id = ?'}
     ORDER BY created_at DESC, id`,
    userId === undefined ? [] : [userId],
  );
  return rows.map(toToken);
}

export async function deleteApiToken(ctx: SqlContext, tokenId: string): Promise<void> {
  await ctx.driver.transaction(async (tx) => {
    const deleted = await tx.query('DELETE FROM api_tokens WHERE id = ? RETURNING id', [tokenId]);
    if (deleted.length === 0) throw tokenNotFound(tokenId);
    await tx.query('DELETE FROM api_tokens WHERE parent_id = ?', [tokenId]);
  });
}

export async function findToken(ctx: SqlContext, tokenHash: string): Promise<{ user: User; token: ApiToken } | null> {
  const [row] = await ctx.driver.query(
    `SELECT u.id AS user_id, u.name, u.created_at AS user_created_at,
       t.id, t.label, t.created_at, t.expires_at, t.parent_id
     FROM api_tokens t JOIN users u ON u.id = t.user_id
     WHERE t.token_hash = ? AND (t.expires_at IS NULL OR t.expires_at > ${ctx.now})`,
    [tokenHash],
  );
  if (!row) return null;
  return {
    user: { id: String(row.user_id), name: String(row.name), createdAt: Number(row.user_created_at) },
    token: toToken(row),
  };
}
