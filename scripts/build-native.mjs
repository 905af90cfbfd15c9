#!/usr/bin/env node
/**
 * Builds the chronoql_native addon, incrementally:
 *   - the CPU build with node-gyp (binding.gyp)   -> build/Release/chronoql_native.node
 *   - the CUDA build with cmake-js (CMakeLists.txt), only when nvcc is on PATH
 *                                                  -> build-cuda/Release/chronoql_native.node
 * A build is skipped when its output is newer than every file under native/
 * and the build files. Compiler output is shown; a failed compile exits
 * non-zero (so a CUDA compile error fails CI wherever nvcc exists).
 *
 * Options: --cpu-only (skip CUDA), --force (rebuild even if up to date).
 * Env: CHRONOQL_SKIP_CUDA=1 skips CUDA; CHRONOQL_CUDA_ARCHITECTURES="80;90"
 * overrides the target GPUs; CHRONOQL_BUILD_JOBS sets the parallelism.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const force = args.has('--force');
const cpuOnly = args.has('--cpu-only') || process.env.CHRONOQL_SKIP_CUDA === '1';
const jobs = String(Number(process.env.CHRONOQL_BUILD_JOBS) || availableParallelism());
const log = (message) => console.log(`[build-native] ${message}`);

function newestMtime(paths) {
  let newest = 0;
  const visit = (path) => {
    if (!existsSync(path)) return;
    const stats = statSync(path);
    if (stats.isDirectory()) {
      for (const entry of readdirSync(path)) visit(join(path, entry));
    } else {
      newest = Math.max(newest, stats.mtimeMs);
    }
  };
  paths.forEach(visit);
  return newest;
}

function upToDate(output, inputs) {
  return !force && existsSync(output) && statSync(output).mtimeMs >= newestMtime(inputs);
}

function onPath(command) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

function run(label, command, commandArgs, env = process.env) {
  const started = Date.now();
  const shown = [command, ...commandArgs].map((a) => (a.startsWith(root) ? relative(root, a) || a : a));
  log(`${label}: ${shown.join(' ')}`);
  const result = spawnSync(command, commandArgs, { cwd: root, stdio: 'inherit', env });
  if (result.error) throw new Error(`${label}: cannot run ${command}: ${result.error.message}`);
  if (result.status !== 0) {
    console.error(`[build-native] ${label} FAILED (exit ${result.status ?? result.signal})`);
    process.exit(result.status || 1);
  }
  return ((Date.now() - started) / 1000).toFixed(1);
}

// Serialises concurrent invocations (e.g. two test runs starting together),
// which would otherwise write the same object files at once.
function withLock(body) {
  mkdirSync(join(root, 'build'), { recursive: true });
  const lock = join(root, 'build', '.build-native.lock');
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      // A lock older than 15 minutes belongs to a build that died.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 15 * 60_000) unlinkSync(lock);
      } catch {
        // vanished meanwhile
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
    }
  }
  try {
    return body();
  } finally {
    try {
      unlinkSync(lock);
    } catch {
      // already gone
    }
  }
}

function nodeGypCommand() {
  const candidates = [
    process.env.npm_config_node_gyp,
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  try {
    candidates.push(createRequire(join(root, 'package.json')).resolve('node-gyp/bin/node-gyp.js'));
  } catch {
    // not installed locally
  }
  const found = candidates.find((c) => c && existsSync(c));
  if (!found) throw new Error('node-gyp not found (it ships with npm); install npm or node-gyp');
  return found;
}

/** Local Node headers, so node-gyp never tries to download them. */
function nodeDirArgs() {
  const fromEnv = process.env.npm_config_nodedir;
  if (fromEnv && existsSync(join(fromEnv, 'include', 'node', 'node_api.h'))) return [`--nodedir=${fromEnv}`];
  const prefix = join(dirname(process.execPath), '..');
  if (existsSync(join(prefix, 'include', 'node', 'node_api.h'))) return [`--nodedir=${prefix}`];
  return [];
}

function touch(path) {
  const now = new Date();
  utimesSync(path, now, now);
}

function buildCpu() {
  const output = join(root, 'build', 'Release', 'chronoql_native.node');
  const inputs = [join(root, 'native'), join(root, 'binding.gyp')];
  if (upToDate(output, inputs)) {
    log(`CPU addon up to date (${relative(root, output)})`);
    return;
  }
  const gyp = nodeGypCommand();
  const configured =
    existsSync(join(root, 'build', 'Makefile')) && statSync(join(root, 'build', 'Makefile')).mtimeMs >= statSync(join(root, 'binding.gyp')).mtimeMs;
  if (!configured || force) run('node-gyp configure', process.execPath, [gyp, 'configure', ...nodeDirArgs()]);
  const seconds = run('node-gyp build', process.execPath, [gyp, 'build', `-j`, jobs, ...nodeDirArgs()]);
  touch(output); // make may find nothing to do; the stamp records that the output is current
  log(`CPU addon built in ${seconds} s (${relative(root, output)})`);
}

function buildCuda() {
  if (cpuOnly) {
    log('CUDA build skipped (--cpu-only / CHRONOQL_SKIP_CUDA=1)');
    return;
  }
  const nvcc = onPath('nvcc');
  if (!nvcc) {
    log('CUDA build skipped: nvcc is not on PATH');
    return;
  }
  if (!onPath('cmake')) {
    console.error('[build-native] nvcc is on PATH but cmake is not: install CMake >= 3.18 to build the CUDA addon');
    process.exit(1);
  }
  const output = join(root, 'build-cuda', 'Release', 'chronoql_native.node');
  const inputs = [join(root, 'native'), join(root, 'CMakeLists.txt')];
  if (upToDate(output, inputs)) {
    log(`CUDA addon up to date (${relative(root, output)})`);
    return;
  }
  const cmakeJs = createRequire(join(root, 'package.json')).resolve('cmake-js/bin/cmake-js');
  const addonApi = createRequire(join(root, 'package.json'))('node-addon-api').include_dir;
  // node-addon-api gives include_dir relative to the current directory, not to the package.
  const defines = [`--CDNODE_ADDON_API_DIR=${resolve(addonApi)}`];
  if (process.env.CHRONOQL_CUDA_ARCHITECTURES) defines.push(`--CDCMAKE_CUDA_ARCHITECTURES=${process.env.CHRONOQL_CUDA_ARCHITECTURES}`);
  // nvcc must also be visible to CMake's check_language(CUDA).
  const env = { ...process.env, CUDACXX: process.env.CUDACXX ?? nvcc };
  const seconds = run('cmake-js build', process.execPath, [cmakeJs, 'build', '--out', 'build-cuda', '--parallel', jobs, ...defines], env);
  if (!existsSync(output)) {
    console.error(`[build-native] cmake-js finished but ${relative(root, output)} is missing`);
    process.exit(1);
  }
  touch(output);
  log(`CUDA addon built in ${seconds} s (${relative(root, output)})`);
}

try {
  withLock(() => {
    buildCpu();
    buildCuda();
  });
} catch (error) {
  console.error(`[build-native] ${error.message}`);
  process.exit(1);
}
