// Compiles the CUDA kernels for the CPU and runs them under AddressSanitizer: a compiler run of
// about 15 CPU-seconds and a run of about 10, so not in the unit tier.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { packageRoot } from '../../src/native/loader.js';

describe('native kernels (emulated)', () => {
  // The CUDA kernels cannot run without a GPU, but their source also compiles
  // for the CPU through a thread-per-lane emulation (native/tools/
  // cuda_emulation.h); this checks their logic against the CPU backend, with
  // AddressSanitizer catching out-of-bounds indexing.
  const compiler = ['c++', 'g++', 'clang++'].find((cc) => spawnSync(cc, ['--version']).status === 0);
  test('CUDA search kernels, emulated on the CPU, agree with the CPU backend', { skip: compiler ? false : 'no C++ compiler', timeout: 180_000 }, () => {
    const native = join(packageRoot(), 'native');
    const sources = [
      'tools/cuda_kernel_emulation.cpp',
      'core/cpu_search.cpp',
      'core/simd.cpp',
      'core/simd_avx2.cpp',
      'core/thread_pool.cpp',
      'core/vector_store.cpp',
    ];
    const inputs = [
      ...sources,
      'tools/cuda_emulation.h',
      'cuda/search_kernels.cuh',
      'core/types.h',
      'core/vector_store.h',
      'core/search_backend.h',
      'core/cpu_search.h',
      'core/topk.h',
      'core/simd.h',
      'core/half.h',
    ];
    const binaryDir = join(tmpdir(), 'chronoql-kernel-emulation');
    const binary = join(binaryDir, 'chronoql_kernel_emulation');
    const newest = Math.max(...inputs.map((f) => statSync(join(native, f)).mtimeMs));
    if (!existsSync(binary) || statSync(binary).mtimeMs < newest) {
      mkdirSync(binaryDir, { recursive: true });
      // -O0 -g1: a third of the compile time of -O1 -g; the run is bound by the lane threads' barriers, not by code speed.
      // C++20 for the emulator's futex barriers; the kernels read 16-byte words through casts, as CUDA code does.
      const flags = [
        '-O0',
        '-g1',
        '-std=c++20',
        '-pthread',
        '-Wno-unknown-pragmas',
        '-fno-strict-aliasing',
        '-fsanitize=address,undefined',
        '-I',
        native,
        '-o',
        binary,
      ];
      const compiled = spawnSync(compiler!, [...flags, ...sources.map((f) => join(native, f))], { encoding: 'utf8' });
      assert.equal(compiled.status, 0, compiled.stderr);
    }
    const run = spawnSync(binary, [], { encoding: 'utf8', env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=0' } });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    // Every scan kernel and query tile was reached, and every case agreed.
    for (const kernel of ['stream/0', 'tensor/16', 'tensor/64', 'tensor/128', 'scalar/8', 'scalar/32']) assert.match(run.stdout, new RegExp(` ok: ${kernel},`));
    assert.doesNotMatch(run.stdout, /MISMATCH/);
  });
});
