/**
 * The `chronoql` command line: one file per command group, each building what it needs through
 * the composition root (app/runtime.ts). bin/chronoql.js adds the evaluation and benchmark
 * commands from eval/, which the product never imports.
 */
import 'reflect-metadata';
import { Command } from 'commander';
import { addAdminCommands } from './adminCommands.js';
import { addBenchmarkCommands } from './benchmarkCommands.js';
import { fail } from './common.js';
import { addMcpCommand } from './mcpCommand.js';
import { addStoreCommands } from './storeCommands.js';

export function createProgram(): Command {
  const program = new Command('chronoql')
    .description('ChronoQL: a GraphQL API for knowledge that changes over time, on a temporal Neo4j graph.')
    .showHelpAfterError();
  addStoreCommands(program);
  addMcpCommand(program);
  addAdminCommands(program);
  addBenchmarkCommands(program);
  return program;
}

export function runProgram(program: Command, argv: readonly string[]): Promise<void> {
  return program.parseAsync(argv).then(() => undefined, fail);
}
