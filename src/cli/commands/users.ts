import type { Command } from 'commander';
import { addToken, addUser, listTokens, listUsers, removeUser, revokeToken } from '../../service/users.ts';
import type { CliRuntime } from '../cli-runtime.ts';
import { formatTable, printJson, printLine } from '../output.ts';

const when = (ms: number | null) => (ms === null ? 'never' : new Date(ms).toISOString());

/** API users and tokens: tokens are shown once and stored as sha-256 hashes. */
export function registerUsers(program: Command, runtime: CliRuntime): void {
  const users = program.command('users').description('manage the API users of quarry serve and their tokens');
  users
    .command('add')
    .description('add a user and print their first API token (shown once)')
    .argument('<name>', 'user name')
    .option('--expires <duration>', 'the token stops working after this long (30d, 12h…)')
    .action(async (name: string, options: { expires?: string }) => {
      const { admin } = await runtime.open();
      const { user, token, record } = await addUser(admin, { name, expiresIn: options.expires });
      if (runtime.json) printJson({ ...user, token, tokenId: record.id, expiresAt: record.expiresAt });
      else
        printLine(
          `Added ${user.name}. Their API token ${record.id} (shown only now; expires ${when(record.expiresAt)}):\n${token}`,
        );
    });
  users
    .command('ls')
    .description('list users')
    .action(async () => {
      const { admin } = await runtime.open();
      const list = await listUsers(admin);
      if (runtime.json) for (const user of list) printJson(user);
      else
        printLine(
          list.length
            ? formatTable(
                ['NAME', 'ID', 'CREATED'],
                list.map((user) => [user.name, user.id, new Date(user.createdAt).toISOString()]),
              )
            : 'No users: quarry serve runs for one local user on loopback (and lets nobody in beyond it).',
        );
    });
  users
    .command('rm')
    .description('remove a user and all their tokens (their sessions stay)')
    .argument('<name>', 'user name')
    .action(async (name: string) => {
      const { admin } = await runtime.open();
      const user = await removeUser(admin, name);
      if (runtime.json) printJson({ type: 'deleted', userId: user.id });
      else printLine(`Removed ${name}.`);
    });

  const tokens = users.command('token').description("a user's API tokens: several each, revoked one at a time");
  tokens
    .command('add')
    .description('make another token for a user (shown once)')
    .argument('<name>', 'user name')
    .option('--expires <duration>', 'the token stops working after this long (30d, 12h…)')
    .option('--label <text>', 'what the token is for')
    .action(async (name: string, options: { expires?: string; label?: string }) => {
      const { admin } = await runtime.open();
      const { token, record } = await addToken(admin, { name, expiresIn: options.expires, label: options.label });
      if (runtime.json) printJson({ ...record, token });
      else printLine(`Token ${record.id} for ${name} (shown only now; expires ${when(record.expiresAt)}):\n${token}`);
    });
  tokens
    .command('ls')
    .description('list tokens (never the tokens themselves)')
    .argument('[name]', 'only this user')
    .action(async (name: string | undefined) => {
      const { admin } = await runtime.open();
      const list = await listTokens(admin, name);
      if (runtime.json) for (const token of list) printJson(token);
      else
        printLine(
          list.length
            ? formatTable(
                ['ID', 'USER', 'LABEL', 'CREATED', 'EXPIRES'],
                list.map((token) => [
                  token.id,
                  token.user,
                  token.label ?? '',
                  when(token.createdAt),
                  when(token.expiresAt),
                ]),
              )
            : 'No tokens.',
        );
    });
  tokens
    .command('rm')
    .description('revoke one token; requests with it are refused at once')
    .argument('<token-id>', 'the id shown by quarry users token ls')
    .action(async (tokenId: string) => {
      const { admin } = await runtime.open();
      await revokeToken(admin, tokenId);
      if (runtime.json) printJson({ type: 'revoked', tokenId });
      else printLine(`Revoked ${tokenId}.`);
    });
}
