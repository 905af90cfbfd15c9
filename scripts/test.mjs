// `npm test` after setup: the house rules (`npm run check`: dependency layers, ESLint and
// Prettier, mostly one thread) beside the suite (scripts/run-tests.mjs): the integration tier under
// the current Node LTS and, beside it, the unit tier under this Node. Each test file runs once. The
// checks print their output when they end. The exit code is the first failure's.
import { spawn } from 'node:child_process';

const windows = process.platform === 'win32';

/** Runs a command; its output goes to ours as it comes, or, when `held`, all at once when it ends. Resolves with its exit code (1 when killed by a signal). */
function run(command, args, held) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: held ? ['ignore', 'pipe', 'pipe'] : 'inherit', shell: windows });
    const output = [];
    if (held) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => output.push(chunk));
    child.on('error', reject).on('exit', (code) => {
      if (held) process.stdout.write(Buffer.concat(output));
      resolve(code ?? 1);
    });
  });
}

const [check, suite] = await Promise.all([
  run(windows ? 'npm.cmd' : 'npm', ['run', 'check'], true),
  run(process.execPath, ['scripts/run-tests.mjs', '--integration-node-major', '24'], false),
]);
process.exit(check || suite);
