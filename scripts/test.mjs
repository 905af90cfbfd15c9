// `npm test` after setup, three runs side by side: the house rules (`npm run check`: dependency
// layers, ESLint and Prettier), the unit tier under the current Node LTS, and the integration tier
// under this Node (scripts/run-tests.mjs). Each test file runs once, under one of the two Node lines;
// the integration tier waits on Neo4j and child processes often enough that the other two fill its
// idle cores. The first two print their output when they end, the suite as it goes. The exit code
// is the first failure's.
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

const codes = await Promise.all([
  run(windows ? 'npm.cmd' : 'npm', ['run', 'check'], true),
  run(process.execPath, ['scripts/run-tests.mjs', '--unit', '--node-major', '24'], true),
  run(process.execPath, ['scripts/run-tests.mjs', '--integration'], false),
]);
process.exit(codes.find((code) => code !== 0) ?? 0);
