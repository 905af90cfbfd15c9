/**
 * Finds and loads the compiled addon. Two builds may exist:
 *   build/Release/chronoql_native.node       CPU build (node-gyp, binding.gyp)
 *   build-cuda/Release/chronoql_native.node  CUDA-enabled build (cmake-js, CMakeLists.txt)
 * The CUDA build is used when a CUDA device is actually usable (it loads fine
 * on machines without a GPU or driver, but then the CPU build is preferred).
 * The configured device (CHRONOQL_DEVICE=cpu|cuda|auto) forces the choice;
 * cuda without a usable device is an error, never a silent fallback, and so is
 * any missing CUDA build or device when CHRONOQL_REQUIRE_CUDA=1.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { BackendInfo, DeviceChoice } from './types.js';

export interface NativeSearchResults {
  k: number;
  ids: Uint32Array;
  scores: Float32Array;
  counts: Uint32Array;
}

export interface NativeVectorIndexHandle {
  addBatch(ids: Uint32Array, vectors: Float32Array, validFrom: Int32Array, validTo: Int32Array): Promise<number>;
  remove(ids: Uint32Array): Promise<number>;
  invalidate(ids: Uint32Array, validTo: Int32Array): Promise<number>;
  search(queries: Float32Array, k: number, asOf: Int32Array, excludeOffsets?: Uint32Array, excludeIds?: Uint32Array, onHost?: boolean): Promise<NativeSearchResults>;
  searchBlended(
    first: Float32Array,
    second: Float32Array,
    omega: Float32Array,
    k: number,
    asOf: Int32Array,
    excludeOffsets?: Uint32Array,
    excludeIds?: Uint32Array,
    onHost?: boolean,
  ): Promise<NativeSearchResults>;
  save(path: string): Promise<void>;
  measureStreamSeconds(): Promise<number>;
  size(): number;
  memoryBytes(): number;
  deviceMemoryBytes(): number;
  /** Device bytes held now, and needed for the rows as of the last mutation (zeros off the GPU). */
  deviceFootprint(): { requiredBytes: number; heldBytes: number };
  close(): void;
  describe(): { dimension: number; storage: 'fp32' | 'fp16'; metric: 'cosine' | 'ip'; backend: 'cpu' | 'cuda' };
}

export interface NativeClassifierHandle {
  scoreBatch(features: Float32Array): Promise<Float32Array>;
  featureCount(): number;
  classCount(): number;
}

export interface NativeRanking {
  ids: Uint32Array;
  scores: Float64Array;
}

export interface NativeAddon {
  NativeVectorIndex: new (dimension: number, storage: string, metric: string, device: string) => NativeVectorIndexHandle;
  NativeClassifier: new (
    featureCount: number,
    mean: Float32Array,
    std: Float32Array,
    layerSizes: Uint32Array,
    weights: Float32Array,
    biases: Float32Array,
    relu: Uint8Array,
  ) => NativeClassifierHandle;
  loadVectorIndex(path: string, device: string): Promise<NativeVectorIndexHandle>;
  fuseArr(first: Float32Array, second: Float32Array, omega: Float32Array): Promise<Float32Array>;
  weightedSum(offsets: Uint32Array, ids: Uint32Array, scores: Float64Array, weights: Float64Array): Promise<NativeRanking>;
  rrf(offsets: Uint32Array, ids: Uint32Array, k: number, weights?: Float64Array): Promise<NativeRanking>;
  /** What the addon knows about itself; the loader adds which build it loaded and what it picked. */
  backendInfo(): Omit<BackendInfo, 'backend' | 'build' | 'addonPath'>;
  /** Free and total memory of the first CUDA device right now (zeros without one). */
  deviceMemory(): { freeBytes: number; totalBytes: number };
  napiVersion: number;
}

export interface LoadedAddon {
  addon: NativeAddon;
  path: string;
  build: 'cpu' | 'cuda';
  /** Device new indexes use unless told otherwise. */
  device: 'cpu' | 'cuda';
  /** When the CUDA build exists but was not chosen: why (e.g. no device, or CHRONOQL_DEVICE=cpu). */
  cudaNotUsedBecause?: string;
}

/** Directory holding chronoql's package.json (works from src/ under tsx and from dist/). */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      try {
        if ((JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string }).name === 'chronoql') return dir;
      } catch {
        // not ours; keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error('chronoql_native: cannot find the chronoql package root from ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export function addonPaths(root = packageRoot()): { cpu: string; cuda: string } {
  return {
    cpu: join(root, 'build', 'Release', 'chronoql_native.node'),
    cuda: join(root, 'build-cuda', 'Release', 'chronoql_native.node'),
  };
}

/** How the process uses the addon: set by the composition root (from the configuration) before anything searches. */
export interface NativeSettings {
  /** Which build is loaded and where new indexes search (CHRONOQL_DEVICE). */
  device: DeviceChoice;
  /** A missing CUDA build or device is an error, never a fall back to the CPU (CHRONOQL_REQUIRE_CUDA=1). */
  requireCuda?: boolean;
  /** The most GPU memory one index may hold; a bigger one is searched on the CPU (CHRONOQL_DEVICE_MEMORY_MB). */
  deviceMemoryCapBytes?: number;
}

let loaded: LoadedAddon | undefined;
let settings: NativeSettings = { device: 'auto' };

/** The build and device choices are fixed once the addon is loaded; the memory cap applies to later searches. */
export function configureNative(next: NativeSettings): void {
  if (loaded !== undefined && (next.device !== settings.device || Boolean(next.requireCuda) !== Boolean(settings.requireCuda))) {
    throw new Error(`chronoql_native is already loaded for device '${settings.device}'${settings.requireCuda ? ' with CUDA required' : ''}; it cannot switch`);
  }
  settings = { ...next };
}

export function nativeSettings(): Readonly<NativeSettings> {
  return settings;
}

export function loadAddon(): LoadedAddon {
  if (loaded !== undefined) return loaded;
  const require = createRequire(import.meta.url);
  const paths = addonPaths();
  const hasCpu = existsSync(paths.cpu);
  const hasCuda = existsSync(paths.cuda);
  const notBuilt = 'chronoql_native is not built: run `npm run build:native` (needs a C++17 compiler; nvcc for the CUDA build)';
  const load = (path: string): NativeAddon => require(path) as NativeAddon;

  const { device, requireCuda } = settings;
  if (device === 'cuda' || requireCuda) {
    const asked = device === 'cuda' ? 'CHRONOQL_DEVICE=cuda' : 'CHRONOQL_REQUIRE_CUDA=1';
    if (!hasCuda) {
      throw new Error(`${asked} but the CUDA build is missing (${paths.cuda}); run \`npm run build:native\` on a machine with nvcc`);
    }
    const addon = load(paths.cuda);
    const info = addon.backendInfo();
    if (info.devices.length === 0) {
      throw new Error(`${asked} but no CUDA device is usable: ${info.cudaUnavailableReason ?? 'unknown reason'}`);
    }
    loaded = { addon, path: paths.cuda, build: 'cuda', device: 'cuda' };
  } else if (device === 'cpu') {
    if (!hasCpu && !hasCuda) throw new Error(notBuilt);
    const path = hasCpu ? paths.cpu : paths.cuda;
    loaded = { addon: load(path), path, build: hasCpu ? 'cpu' : 'cuda', device: 'cpu', cudaNotUsedBecause: 'CHRONOQL_DEVICE=cpu' };
  } else {
    let cudaNotUsedBecause: string | undefined;
    if (hasCuda) {
      const addon = load(paths.cuda);
      const info = addon.backendInfo();
      if (info.devices.length > 0) {
        loaded = { addon, path: paths.cuda, build: 'cuda', device: 'cuda' };
      } else {
        cudaNotUsedBecause = `the CUDA build found no usable device: ${info.cudaUnavailableReason ?? 'unknown reason'}`;
        if (!hasCpu) loaded = { addon, path: paths.cuda, build: 'cuda', device: 'cpu', cudaNotUsedBecause };
      }
    }
    if (loaded === undefined) {
      if (!hasCpu) throw new Error(notBuilt);
      loaded = { addon: load(paths.cpu), path: paths.cpu, build: 'cpu', device: 'cpu', cudaNotUsedBecause };
    }
  }
  return loaded;
}
