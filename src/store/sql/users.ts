import { QuarryError } from '../errors.ts';
import type { User } from '../store.ts';
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
    if (taken.length > 0) throw new QuarryError('CONFLICT', `A user named "${input.name}" already exists.`, { details: { field: 'name' } });
    const rows = await tx.query(`INSERT INTO users (id, name, created_at) VALUES (?, ?, ${ctx.now}) RETURNING *`, [input.id ?? newId(), input.name]);
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

export async function addApiToken(ctx: SqlContext, input: { userId: string; tokenHash: string; label?: string }): Promise<void> {
  await ctx.driver.transaction(async (tx) => {
    const user = await tx.query('SELECT id FROM users WHERE id = ?', [input.userId]);
    if (user.length === 0) throw userNotFound(input.userId);
    await tx.query(`INSERT INTO api_tokens (token_hash, user_id, label, created_at) VALUES (?, ?, ?, ${ctx.now})`, [
      input.tokenHash,
      input.userId,
      input.label ?? null,
    ]);
  });
}

export async function findUserByTokenHash(ctx: SqlContext, tokenHash: string): Promise<User | null> {
  const rows = await ctx.driver.query('SELECT u.* FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?', [tokenHash]);
  return rows[0] ? toUser(rows[0]) : null;
}
