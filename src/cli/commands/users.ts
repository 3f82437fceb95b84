import { createHash, randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { QuarryError } from '../../store/errors.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { formatTable, printJson } from '../output.ts';

/** API users: tokens are shown once and stored as sha-256 hashes. */
export function registerUsers(program: Command, runtime: CliRuntime): void {
  const users = program.command('users').description('manage the API users of quarry serve');
  users
    .command('add')
    .description('add a user and print their API token (shown once)')
    .argument('<name>', 'user name')
    .action(async (name: string) => {
      const context = await runtime.open();
      const user = await context.store.createUser({ name });
      const token = `qry_${randomBytes(24).toString('base64url')}`;
      await context.store.addApiToken({ userId: user.id, tokenHash: createHash('sha256').update(token).digest('hex'), label: 'created by quarry users add' });
      if (runtime.json) printJson({ ...user, token });
      else console.log(`Added ${user.name}. Their API token (shown only now):\n${token}`);
    });
  users
    .command('ls')
    .description('list users')
    .action(async () => {
      const context = await runtime.open();
      const list = await context.store.listUsers();
      if (runtime.json) for (const user of list) printJson(user);
      else console.log(list.length ? formatTable(['NAME', 'ID', 'CREATED'], list.map((user) => [user.name, user.id, new Date(user.createdAt).toISOString()])) : 'No users: quarry serve runs for one local user on loopback.');
    });
  users
    .command('rm')
    .description('remove a user and their tokens (their sessions stay)')
    .argument('<name>', 'user name')
    .action(async (name: string) => {
      const context = await runtime.open();
      const user = (await context.store.listUsers()).find((each) => each.name === name);
      if (!user) throw new QuarryError('USER_NOT_FOUND', `No user named "${name}". List them with: quarry users ls.`, { details: { name } });
      await context.store.deleteUser(user.id);
      if (runtime.json) printJson({ type: 'deleted', userId: user.id });
      else console.log(`Removed ${name}.`);
    });
}
