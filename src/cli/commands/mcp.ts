import type { Command } from 'commander';
import type { CliRuntime } from '../cli-runtime.ts';
import { collect } from '../parse-options.ts';

/**
 * `quarry mcp`: Quarry as an MCP server over stdio, for MCP clients that start it themselves. It
 * runs the research it starts in this process (unless --no-runner: workers elsewhere do), and hands
 * unfinished sessions back to the store when the client closes it; any worker, or a later
 * `quarry mcp`, carries them on.
 */
export function registerMcp(program: Command, runtime: CliRuntime): void {
  program
    .command('mcp')
    .description('serve MCP over stdio: tools to start, read and continue research, and reports as resources')
    .option('--docs <folder>', 'documents folder for new research (repeatable)', collect)
    .option('--no-runner', 'only start and read sessions; workers elsewhere run them')
    .action(async (options: { docs?: string[]; runner: boolean }) => {
      const [{ StdioServerTransport }, { connectMcpServer }] = await Promise.all([
        import('@modelcontextprotocol/sdk/server/stdio.js'),
        import('../../server/mcp.ts'),
      ]);
      const context = await runtime.openRunner({ docs: options.docs });
      if (options.runner) context.runner.start();
      const server = await connectMcpServer(context, new StdioServerTransport());
      const closed = new Promise<void>((resolve) => {
        server.server.onclose = resolve;
      });
      console.error(`quarry mcp: ready on stdio (store ${context.store.info().location})`);
      const stop = () => void server.close();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      process.stdin.once('end', stop);
      await closed;
      await context.runner.shutdown({ handoff: true, graceMs: 5_000 });
    });
}
