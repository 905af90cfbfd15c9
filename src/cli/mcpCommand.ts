/** `chronoql mcp`: ChronoQL's MCP tools and resources over stdio, for an MCP client that starts the command. */
import type { Command } from 'commander';
import { openRuntime, type Runtime } from '../app/runtime.js';
import { serveMcpOverStdio } from '../api/mcp/stdio.js';
import { cliConfig, cliLog } from './common.js';

export function addMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description(
      'Serve the MCP tools and resources over stdio, for an MCP client that starts this command; the same configuration and managed Neo4j as `serve`, with CHRONOQL_API_KEY as the credential.',
    )
    .action(async () => {
      const config = cliConfig();
      const log = cliLog();
      let runtime: Runtime | undefined;
      const open = async (): Promise<Runtime> => {
        runtime = await openRuntime(config, log, { changeFeed: true });
        runtime.keepIndexesFresh();
        return runtime;
      };
      try {
        await serveMcpOverStdio(open, { ...config, log });
      } finally {
        await runtime?.close();
      }
    });
}
