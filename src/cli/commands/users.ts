import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { formatTable, printJson, printLine } from '../output.ts';

const when = (ms: number | null) => (ms === null ? 'never' : new Date(ms).toISOString());

function adoptedLine({
  user,
  adopted,
  kept,
  threads,
}: {
  user: { name: string };
  adopted: number;
  kept: number;
  threads: number;
}): string {
  const clashes = kept - threads;
  const notes = [
    clashes ? ` ${clashes} stay with the local user: ${user.name} already has sessions with their external ids.` : '',
    threads
      ? ` ${threads} LangGraph thread${threads === 1 ? ' stays' : 's stay'} with the local user, where your graph's QuarrySaver finds ${threads === 1 ? 'it' : 'them'}.`
      : '',
  ];
  return `Handed ${adopted} session${adopted === 1 ? '' : 's'} of the local user to ${user.name}: they see them in the web UI and the API; here, with quarry --as ${user.name} ls.${notes.join('')}`;
}

function localSessionsNote(count: number, name: string): string {
  return [
    ``,
    `This store has ${count} session${count === 1 ? '' : 's'} of the local user (made before it had users). Now that it has a user,`,
    `quarry serve asks for sign-in even on loopback, and shows those sessions to no one; quarry ls still lists them.`,
    `To hand them to ${name}: quarry users adopt ${name}`,
  ].join('\n');
}

/** API users and tokens: tokens are shown once and stored as sha-256 hashes. */
export function registerUsers(program: Command, runtime: CliRuntime): void {
  const users = program.command('users').description('manage the API users of quarry serve and their tokens');
  users
    .command('add')
    .description('add a user and print their first API token (shown once)')
    .argument('<name>', 'user name')
    .option('--expires <duration>', 'the token stops working after this long (30d, 12h…)')
    .option('--adopt-local', "hand them the local user's sessions (made before the store had users)")
    .action(async (name: string, options: { expires?: string; adoptLocal?: boolean }) => {
      const { LOCAL_OWNER } = await import('../../service/service-context.ts');
      const { addUser, adoptLocalSessions } = await import('../../service/users.ts');
      const { admin } = await runtime.open();
      const { user, token, record } = await addUser(admin, { name, expiresIn: options.expires });
      const adopted = options.adoptLocal ? await adoptLocalSessions(admin, name) : null;
      // Never silently: the first user ends loopback's local mode, and the local user's sessions
      // are then no one's on the server.
      const local = await admin.countSessions({ ownerId: LOCAL_OWNER });
      if (runtime.json)
        printJson({
          ...user,
          token,
          tokenId: record.id,
          expiresAt: record.expiresAt,
          ...(adopted ? { adopted: adopted.adopted } : {}),
          localSessions: local,
        });
      else {
        printLine(
          `Added ${user.name}. Their API token ${record.id} (shown only now; expires ${when(record.expiresAt)}):\n${token}`,
        );
        if (adopted) printLine(adoptedLine(adopted));
        else if (local > 0) printLine(localSessionsNote(local, name));
      }
    });
  users
    .command('adopt')
    .description("hand the local user's sessions (made before the store had users) to a user")
    .argument('<name>', 'user name')
    .action(async (name: string) => {
      const { adoptLocalSessions } = await import('../../service/users.ts');
      const { admin } = await runtime.open();
      const adopted = await adoptLocalSessions(admin, name);
      if (runtime.json)
        printJson({
          type: 'adopted',
          userId: adopted.user.id,
          adopted: adopted.adopted,
          kept: adopted.kept,
          threads: adopted.threads,
        });
      else printLine(adoptedLine(adopted));
    });
  users
    .command('ls')
    .description('list users')
    .action(async () => {
      const { listUsers } = await import('../../service/users.ts');
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
      const { removeUser } = await import('../../service/users.ts');
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
      const { addToken } = await import('../../service/users.ts');
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
      const { listTokens } = await import('../../service/users.ts');
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
      const { revokeToken } = await import('../../service/users.ts');
      const { admin } = await runtime.open();
      await revokeToken(admin, tokenId);
      if (runtime.json) printJson({ type: 'revoked', tokenId });
      else printLine(`Revoked ${tokenId}.`);
    });
}
