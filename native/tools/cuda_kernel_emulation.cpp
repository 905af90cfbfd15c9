// Runs the CUDA search kernels (native/cuda/search_kernels.cuh) on the CPU
// through cuda_emulation.h and compares them with the CPU backend: a check of
// the GPU code's logic for machines without a GPU (the real device run is
// chronoql_cuda_selftest). Built on demand:
//   cmake --build build-cuda --target chronoql_kernel_emulation && build-cuda/chronoql_kernel_emulation
// Exit status 0 = every case agrees.
#include "cuda_emulation.h"
// (the shims above must precede the kernels)
#include "../cuda/search_kernels.cuh"

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "../core/cpu_search.h"
#include "../core/vector_store.h"

using namespace chronoql;
using namespace chronoql::cuda_kernels;

namespace {

struct Case {
  std::string name;
  uint32_t rows, dimension, queries, k;
  Storage storage;
  bool integers;  // exact arithmetic: ids and scores must match bit for bit
  int multiprocessors;
  bool exclusions;
  bool deletions;
};

template <typename RowT, int Tile>
void runScan(const ScanPlan& plan, const DeviceRows& rows, const DeviceQueries& queries, float* partialScores,
             RowId* partialIds) {
  emu::launch(emu::Dim3{plan.rowBlocks, plan.queryTiles, 1}, kThreads, plan.scanSharedBytes, &scanTopKKernel<RowT, Tile>,
              rows, queries, plan.rowsPerBlock, partialScores, partialIds);
}

SearchResults emulatedSearch(const FlatVectorStore& store, const SearchRequest& request, int multiprocessors) {
  SearchResults results;
  results.reset(request.queryCount, request.k);
  ScanPlan plan;
  if (!planScan(store.rowCount(), request.queryCount, request.k, multiprocessors, 227 * 1024, plan)) {
    throw std::runtime_error("plan failed");
  }
  // The device mirror is one contiguous buffer; the test stores use one chunk.
  if (store.chunks().size() != 1) throw std::runtime_error("test store must have one chunk");
  DeviceRows rows{store.chunks()[0].data.get(), store.ids(), store.validFrom(), store.validTo(), store.deleted(),
                  store.rowCount(), store.dimension()};
  DeviceQueries queries{request.queries, request.asOf, request.excludeOffsets, request.excludeIds, request.queryCount,
                        request.k};
  const size_t partialCount = static_cast<size_t>(request.queryCount) * plan.rowBlocks * request.k;
  std::vector<float> partialScores(partialCount, 12345.0f);  // poison: every slot must be written
  std::vector<RowId> partialIds(partialCount, 0xDEADBEEFu);
  const bool half = store.storage() == Storage::Fp16;
  if (plan.queryTile == 32) {
    if (half) runScan<__half, 32>(plan, rows, queries, partialScores.data(), partialIds.data());
    else runScan<float, 32>(plan, rows, queries, partialScores.data(), partialIds.data());
  } else {
    if (half) runScan<__half, 8>(plan, rows, queries, partialScores.data(), partialIds.data());
    else runScan<float, 8>(plan, rows, queries, partialScores.data(), partialIds.data());
  }
  emu::launch(emu::Dim3{plan.mergeBlocks, 1, 1}, kThreads, plan.mergeSharedBytes, &mergeTopKKernel,
              static_cast<const float*>(partialScores.data()), static_cast<const RowId*>(partialIds.data()),
              plan.rowBlocks, request.queryCount, request.k, results.ids.data(), results.scores.data(),
              results.counts.data());
  return results;
}

int runCase(const Case& c) {
  std::mt19937 rng(static_cast<uint32_t>(c.rows * 31 + c.queries));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(-2, 2);
  std::uniform_int_distribution<int> day(0, 30);
  FlatVectorStore store(c.dimension, c.storage, Metric::InnerProduct);
  std::vector<RowId> ids(c.rows);
  std::vector<float> vectors(static_cast<size_t>(c.rows) * c.dimension);
  std::vector<IndexTime> from(c.rows), to(c.rows);
  for (uint32_t r = 0; r < c.rows; ++r) {
    ids[r] = (r * 7919u) % 1000003u;
    for (uint32_t i = 0; i < c.dimension; ++i) vectors[static_cast<size_t>(r) * c.dimension + i] = c.integers ? small(rng) : uniform(rng);
    from[r] = day(rng);
    to[r] = r % 4 == 0 ? from[r] + 1 + day(rng) : kOpenEnd;
  }
  store.append(ids.data(), vectors.data(), from.data(), to.data(), c.rows);
  if (c.deletions) {
    std::vector<RowId> gone;
    for (uint32_t r = 0; r < c.rows; r += 5) gone.push_back(ids[r]);
    store.remove(gone.data(), gone.size());
  }
  std::vector<float> queries(static_cast<size_t>(c.queries) * c.dimension);
  for (auto& v : queries) v = c.integers ? small(rng) : uniform(rng);
  std::vector<IndexTime> asOf(c.queries);
  for (uint32_t q = 0; q < c.queries; ++q) asOf[q] = day(rng) + 5;
  std::vector<uint32_t> offsets(c.queries + 1, 0);
  std::vector<RowId> excluded;
  if (c.exclusions) {
    for (uint32_t q = 0; q < c.queries; ++q) {
      std::vector<RowId> list;
      for (uint32_t e = 0; e < q % 4; ++e) list.push_back(ids[(q * 13 + e * 29) % c.rows]);
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
      excluded.insert(excluded.end(), list.begin(), list.end());
      offsets[q + 1] = static_cast<uint32_t>(excluded.size());
    }
  }
  SearchRequest request;
  request.queries = queries.data();
  request.queryCount = c.queries;
  request.k = c.k;
  request.asOf = asOf.data();
  request.excludeOffsets = c.exclusions ? offsets.data() : nullptr;
  request.excludeIds = excluded.data();
  request.cpuKernel = activeCpuKernel();

  SearchResults cpu;
  CpuSearchBackend().search(store, request, cpu);
  const SearchResults gpu = emulatedSearch(store, request, c.multiprocessors);

  int failures = 0;
  for (uint32_t q = 0; q < c.queries && failures < 10; ++q) {
    if (cpu.counts[q] != gpu.counts[q]) {
      std::printf("  query %u: count cpu=%u emulated-gpu=%u\n", q, cpu.counts[q], gpu.counts[q]);
      ++failures;
      continue;
    }
    for (uint32_t j = 0; j < c.k; ++j) {
      const size_t i = static_cast<size_t>(q) * c.k + j;
      if (j >= cpu.counts[q]) {
        if (gpu.ids[i] != kNoId) {
          std::printf("  query %u slot %u: unused slot holds id %u\n", q, j, gpu.ids[i]);
          ++failures;
        }
        continue;
      }
      const bool exact = c.integers;
      const bool scoreOk = exact ? cpu.scores[i] == gpu.scores[i] : std::fabs(cpu.scores[i] - gpu.scores[i]) <= 1e-4f;
      const bool idOk = cpu.ids[i] == gpu.ids[i] || (!exact && scoreOk);
      if (!scoreOk || !idOk) {
        std::printf("  query %u rank %u: cpu (%u, %.7f) emulated-gpu (%u, %.7f)\n", q, j, cpu.ids[i], cpu.scores[i],
                    gpu.ids[i], gpu.scores[i]);
        ++failures;
      }
    }
  }
  uint32_t hits = 0;
  for (uint32_t q = 0; q < c.queries; ++q) hits += gpu.counts[q];
  std::printf("%-34s %s (%u hits)\n", c.name.c_str(), failures == 0 ? "ok" : "MISMATCH", hits);
  return failures;
}

}  // namespace

int main() {
  const std::vector<Case> cases = {
      // name, rows, d, Q, k, storage, integers, SMs, exclusions, deletions
      {"ties, Q=40 (32-query tiles), 2 SMs", 1000, 24, 40, 16, Storage::Fp32, true, 2, true, true},
      {"random, Q=5 (8-query tiles), d=37", 700, 37, 5, 10, Storage::Fp32, false, 3, true, false},
      {"fp16 rows, Q=33, d=64", 900, 64, 33, 10, Storage::Fp16, false, 2, false, true},
      {"k=256 above the valid rows", 300, 16, 9, 256, Storage::Fp32, true, 1, true, true},
      {"three rows, k=1", 3, 8, 6, 1, Storage::Fp32, true, 4, false, false},
      {"rows not a multiple of 128, many blocks", 1300, 8, 10, 7, Storage::Fp16, true, 8, true, true},
  };
  int failures = 0;
  for (const Case& c : cases) failures += runCase(c);
  return failures == 0 ? 0 : 1;
}
