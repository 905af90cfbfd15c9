import type { Command } from 'commander';
import { addBenchCommands } from './benchCommands.js';
import { addEvaluationCommands } from './evaluationCommands.js';
import { addOverTimeCommand } from './overTimeCommand.js';

/** Adds `bench …`, the `eval-*` and the `train-*` commands to the product's command line. */
export function addEvaluationSideCommands(program: Command): void {
  addBenchCommands(program);
  addEvaluationCommands(program);
  addOverTimeCommand(program);
}
