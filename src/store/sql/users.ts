import { QuarryError } from '../errors.ts';
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

export async function deleteUser(ctx: SqlContext, userId: string): Promise<void> {
  await ctx.driver.transaction(async (tx) => {
    await tx.query('DELETE FROM api_tokens WHERE user_id = ?', [userId]);
    const deleted = await tx.query('DELETE FROM users WHERE id = ? RETURNING id', [userId]);
    if (deleted.length === 0) throw userNotFound(userId);
  });
}

const toToken = (row: Row): ApiToken => ({
  id: String(row.id),
  userId: String(row.user_id),
  label: (row.label as string | null) ?? null,
  createdAt: Number(row.created_at),
  expiresAt: row.expires_at === null || row.expires_at === undefined ? null : Number(row.expires_at),
});

export async function addApiToken(
  ctx: SqlContext,
  input: { userId: string; tokenHash: string; label?: string; expiresAt?: number | null },
): Promise<ApiToken> {
  return ctx.driver.transaction(async (tx) => {
    const user = await tx.query('SELECT id FROM users WHERE id = ?', [input.userId]);
    if (user.length === 0) throw userNotFound(input.userId);
    const [row] = await tx.query(
      `INSERT INTO api_tokens (id, token_hash, user_id, label, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ${ctx.now})
       RETURNING id, user_id, label, created_at, expires_at`,
      [input.tokenHash.slice(0, 12), input.tokenHash, input.userId, input.label ?? null, input.expiresAt ?? null],
    );
    return toToken(row!);
  });
}

export async function listApiTokens(ctx: SqlContext, userId?: string): Promise<ApiToken[]> {
  const rows = await ctx.driver.query(
    `SELECT id, user_id, label, created_at, expires_at FROM api_tokens${userId === undefined ? '' : ' WHERE user_id = ?'}
     ORDER BY created_at DESC, id`,
    userId === undefined ? [] : [userId],
  );
  return rows.map(toToken);
}

export async function deleteApiToken(ctx: SqlContext, tokenId: string): Promise<void> {
  const deleted = await ctx.driver.query('DELETE FROM api_tokens WHERE id = ? RETURNING id', [tokenId]);
  if (deleted.length === 0) {
    throw new QuarryError(
      'TOKEN_NOT_FOUND',
      `No API token with id "${tokenId}". List them with: quarry users token ls.`,
      {
        details: { tokenId },
      },
    );
  }
}

export async function findUserByTokenHash(ctx: SqlContext, tokenHash: string): Promise<User | null> {
  const rows = await ctx.driver.query(
    `SELECT u.* FROM api_tokens t JOIN users u ON u.id = t.user_id
     WHERE t.token_hash = ? AND (t.expires_at IS NULL OR t.expires_at > ${ctx.now})`,
    [tokenHash],
  );
  return rows[0] ? toUser(rows[0]) : null;
}
