// `npm test` after setup: the house rules (`npm run check`: dependency layers and ESLint, mostly
// one thread) and the unit tier under the current Node LTS run side by side, then, if both passed,
// the whole suite under this Node (scripts/run-tests.mjs). The exit code is the first failure's.
import { spawn } from 'node:child_process';

const windows = process.platform === 'win32';

/** Runs a command with this process's terminal; resolves with its exit code (1 when killed by a signal). */
function run(command, args) {
  return new Promise((resolve, reject) => {
    spawn(command, args, { stdio: 'inherit', shell: windows })
      .on('error', reject)
      .on('exit', (code) => resolve(code ?? 1));
  });
}

const [check, unitOnLts] = await Promise.all([
  run(windows ? 'npm.cmd' : 'npm', ['run', 'check']),
  run(process.execPath, ['scripts/run-tests.mjs', '--unit', '--node-major', '24']),
]);
if (check !== 0 || unitOnLts !== 0) process.exit(check || unitOnLts);
process.exit(await run(process.execPath, ['scripts/run-tests.mjs']));
