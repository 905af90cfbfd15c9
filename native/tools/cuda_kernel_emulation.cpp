// Runs the CUDA search kernels (native/cuda/search_kernels.cuh) on the CPU
// through cuda_emulation.h and compares them with the CPU backend: a check of
// the GPU code's logic for machines without a GPU (the real device run is
// chronoql_cuda_selftest). Built on demand:
//   cmake --build build-cuda --target chronoql_kernel_emulation && build-cuda/chronoql_kernel_emulation
// Each case names the scan kernel it must reach; a line per case gives the
// agreement with the CPU backend (recall@k, largest score difference) and,
// for the tensor kernel, how far its fp16 scores alone are from the exact
// ones against the margin the kernel allows. Exit status 0 = every case agrees.
#include "cuda_emulation.h"
// (the shims above must precede the kernels)
#include "../cuda/search_kernels.cuh"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../core/cpu_search.h"
#include "../core/vector_store.h"

using namespace chronoql;
using namespace chronoql::cuda_kernels;

namespace {

// An H100's shared memory; the multiprocessor count is per case (few, so the
// emulated grids stay small).
DeviceLimits emulatedDevice(int multiprocessors) {
  DeviceLimits device;
  device.multiprocessors = multiprocessors;
  device.sharedPerBlock = 227 * 1024;
  device.sharedPerMultiprocessor = 228 * 1024;
  return device;
}

struct Case {
  std::string name;
  uint32_t rows, dimension, queries, k;
  Storage storage;
  bool integers;  // exact arithmetic: ids and scores must match bit for bit
  int multiprocessors;
  bool exclusions;
  bool deletions;
  ScanKernel kernel;  // the scan the plan must choose
  int queryTile;      // and its query tile (0: any)
  float largeValue;   // when non-zero, one row holds this value (beyond fp16: the CUDA-core scan)
};

const char* kernelName(ScanKernel kernel) {
  switch (kernel) {
    case ScanKernel::Stream: return "stream";
    case ScanKernel::Tensor: return "tensor";
    case ScanKernel::Scalar: return "scalar";
  }
  return "?";
}

struct EmulatedSearch {
  SearchResults results;
  SearchPlan plan;
  RowRange range;
  TensorQueryBatch tensorQueries;
};

EmulatedSearch emulatedSearch(const FlatVectorStore& store, const SearchRequest& request, int multiprocessors) {
  EmulatedSearch out;
  out.results.reset(request.queryCount, request.k);
  // The device mirror is one contiguous buffer; the test stores use one chunk.
  if (store.chunks().size() != 1) throw std::runtime_error("test store must have one chunk");
  const void* rowData = store.chunks()[0].data.get();
  const bool half = store.storage() == Storage::Fp16;
  const uint32_t d = store.dimension();
  const auto launch = [](auto kernel, uint32_t gridX, uint32_t gridY, size_t sharedBytes, auto... arguments) {
    emu::launch(emu::Dim3{gridX, gridY, 1}, kThreads, sharedBytes, kernel, arguments...);
  };

  unsigned maxima[2] = {0, 0};
  const uint32_t rangeBlocks = ceilDivide(store.rowCount(), kThreads);
  if (half) launch(rowRangeKernel<__half>, rangeBlocks, 1u, size_t{0}, static_cast<const __half*>(rowData), 0u, store.rowCount(), d, maxima);
  else launch(rowRangeKernel<float>, rangeBlocks, 1u, size_t{0}, static_cast<const float*>(rowData), 0u, store.rowCount(), d, maxima);
  std::memcpy(&out.range.normSquared, &maxima[0], sizeof(float));
  std::memcpy(&out.range.largestMagnitude, &maxima[1], sizeof(float));

  out.tensorQueries = prepareTensorQueries(request.queries, request.queryCount, d, half, out.range);
  const bool tensorEligible = rowsFitHalf(out.range) && out.tensorQueries.representable;
  if (!planSearch(store.rowCount(), d, request.queryCount, request.k, tensorEligible, emulatedDevice(multiprocessors), out.plan)) {
    throw std::runtime_error("plan failed");
  }
  DeviceRows rows{rowData, store.ids(), store.validFrom(), store.validTo(), store.deleted(), store.rowCount(), d};
  DeviceQueries queries{request.queries,
                        reinterpret_cast<const __half*>(out.tensorQueries.halves.data()),
                        out.tensorQueries.margins.data(),
                        out.tensorQueries.paddedDimension,
                        request.asOf,
                        request.excludeOffsets,
                        request.excludeIds,
                        request.queryCount,
                        request.k};
  const size_t partialCount = static_cast<size_t>(request.queryCount) * out.plan.listsPerQuery * request.k;
  std::vector<float> partialScores(partialCount, 12345.0f);  // poison: every slot must be written
  std::vector<RowId> partialIds(partialCount, 0xDEADBEEFu);
  launchSearch(launch, out.plan, half, rows, queries, partialScores.data(), partialIds.data(), out.results.ids.data(),
               out.results.scores.data(), out.results.counts.data());
  return out;
}

// The tensor scores the kernel starts from, recomputed here (fp16 operands,
// fp32 sum), against the exact scores: the largest error over every row and
// query, and the smallest margin the kernel allowed.
struct TensorScoreCheck {
  double largestError = 0.0;
  double smallestMargin = 1e30;
  bool withinMargins = true;
};

TensorScoreCheck checkTensorScores(const FlatVectorStore& store, const SearchRequest& request, const TensorQueryBatch& batch) {
  TensorScoreCheck check;
  const uint32_t d = store.dimension();
  const bool half = store.storage() == Storage::Fp16;
  const char* data = static_cast<const char*>(store.chunks()[0].data.get());
  std::vector<float> row(d), halfRow(d);
  for (uint32_t r = 0; r < store.rowCount(); ++r) {
    for (uint32_t i = 0; i < d; ++i) {
      row[i] = half ? halfBitsToFloat(reinterpret_cast<const uint16_t*>(data)[static_cast<size_t>(r) * d + i])
                    : reinterpret_cast<const float*>(data)[static_cast<size_t>(r) * d + i];
      halfRow[i] = halfBitsToFloat(floatToHalfBits(row[i]));
    }
    for (uint32_t q = 0; q < request.queryCount; ++q) {
      const float* query = request.queries + static_cast<size_t>(q) * d;
      const uint16_t* halfQuery = batch.halves.data() + static_cast<size_t>(q) * batch.paddedDimension;
      float exact = 0.0f, tensor = 0.0f;
      for (uint32_t i = 0; i < d; ++i) {
        exact = std::fma(query[i], row[i], exact);
        tensor = std::fma(halfBitsToFloat(halfQuery[i]), halfRow[i], tensor);
      }
      const double error = std::fabs(static_cast<double>(tensor) - exact);
      check.largestError = std::max(check.largestError, error);
      check.smallestMargin = std::min<double>(check.smallestMargin, batch.margins[q]);
      if (error > batch.margins[q]) check.withinMargins = false;
    }
  }
  return check;
}

int runCase(const Case& c) {
  const auto started = std::chrono::steady_clock::now();
  std::mt19937 rng(static_cast<uint32_t>(c.rows * 31 + c.queries * 7 + c.k));
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
  if (c.largeValue != 0.0f) vectors[static_cast<size_t>(c.rows / 2) * c.dimension] = c.largeValue;
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
  const EmulatedSearch emulated = emulatedSearch(store, request, c.multiprocessors);
  const SearchResults& gpu = emulated.results;

  int failures = 0;
  if (emulated.plan.kernel != c.kernel || (c.queryTile != 0 && emulated.plan.queryTile != c.queryTile)) {
    std::printf("  planned the %s scan (query tile %d), expected %s (%d)\n", kernelName(emulated.plan.kernel),
                emulated.plan.queryTile, kernelName(c.kernel), c.queryTile);
    ++failures;
  }
  uint32_t expectedHits = 0, foundHits = 0;
  double largestDifference = 0.0;
  for (uint32_t q = 0; q < c.queries && failures < 10; ++q) {
    if (cpu.counts[q] != gpu.counts[q]) {
      std::printf("  query %u: count cpu=%u emulated-gpu=%u\n", q, cpu.counts[q], gpu.counts[q]);
      ++failures;
      continue;
    }
    const size_t first = static_cast<size_t>(q) * c.k;
    std::set<RowId> expected(cpu.ids.begin() + first, cpu.ids.begin() + first + cpu.counts[q]);
    for (uint32_t j = 0; j < c.k; ++j) {
      const size_t i = first + j;
      if (j >= cpu.counts[q]) {
        if (gpu.ids[i] != kNoId) {
          std::printf("  query %u slot %u: unused slot holds id %u\n", q, j, gpu.ids[i]);
          ++failures;
        }
        continue;
      }
      ++expectedHits;
      if (expected.count(gpu.ids[i]) != 0) ++foundHits;
      const double difference = std::fabs(static_cast<double>(cpu.scores[i]) - gpu.scores[i]);
      largestDifference = std::max(largestDifference, difference);
      const bool exact = c.integers;
      const bool scoreOk = exact ? cpu.scores[i] == gpu.scores[i] : difference <= 1e-4 * std::max(1.0, std::fabs(static_cast<double>(cpu.scores[i])));
      const bool idOk = cpu.ids[i] == gpu.ids[i] || (!exact && scoreOk);
      if (!scoreOk || !idOk) {
        std::printf("  query %u rank %u: cpu (%u, %.7f) emulated-gpu (%u, %.7f)\n", q, j, cpu.ids[i], cpu.scores[i],
                    gpu.ids[i], gpu.scores[i]);
        ++failures;
      }
    }
  }
  std::string tensorNote;
  if (emulated.plan.kernel == ScanKernel::Tensor) {
    const TensorScoreCheck check = checkTensorScores(store, request, emulated.tensorQueries);
    char line[160];
    std::snprintf(line, sizeof line, "; fp16 tensor scores off by <= %.2e, margin >= %.2e", check.largestError, check.smallestMargin);
    tensorNote = line;
    if (!check.withinMargins) {
      std::printf("  a tensor score is further from the exact score than its margin\n");
      ++failures;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("%-44s %s: %s/%d, recall@k %.4f (%u hits), largest score difference %.2e%s (%.1f s)\n", c.name.c_str(),
              failures == 0 ? "ok" : "MISMATCH", kernelName(emulated.plan.kernel), emulated.plan.queryTile,
              expectedHits == 0 ? 1.0 : static_cast<double>(foundHits) / expectedHits, foundHits, largestDifference,
              tensorNote.c_str(), seconds);
  return failures;
}

}  // namespace

int main() {
  constexpr ScanKernel stream = ScanKernel::Stream, tensor = ScanKernel::Tensor, scalar = ScanKernel::Scalar;
  const std::vector<Case> cases = {
      // name, rows, d, Q, k, storage, integers, SMs, exclusions, deletions, kernel, tile, large value
      {"Q=1, fp16 rows, 16-byte loads", 1000, 64, 1, 10, Storage::Fp16, false, 2, false, true, stream, 0, 0},
      {"Q=3, fp32, d=37 (element loads), k=100", 700, 37, 3, 100, Storage::Fp32, false, 1, true, true, stream, 0, 0},
      {"Q=4 ties, fp32", 600, 24, 4, 16, Storage::Fp32, true, 3, true, false, stream, 0, 0},
      {"Q=16, fp16, rows not a multiple of 128", 900, 64, 16, 10, Storage::Fp16, false, 2, false, true, tensor, 16, 0},
      {"Q=40, fp32 converted, d=37 (element staging)", 500, 37, 40, 100, Storage::Fp32, false, 1, true, false, tensor, 64, 0},
      {"Q=100, fp32 converted, d=96 (two slices), k=50", 400, 96, 100, 50, Storage::Fp32, false, 1, true, true, tensor, 128, 0},
      {"Q=300 ties, fp16", 300, 24, 300, 16, Storage::Fp16, true, 1, true, true, tensor, 128, 0},
      {"k=256 above the valid rows", 300, 16, 9, 256, Storage::Fp32, true, 1, true, true, tensor, 16, 0},
      {"three rows, k=1", 3, 8, 6, 1, Storage::Fp32, true, 4, false, false, tensor, 16, 0},
      {"many row blocks, d=8", 1300, 8, 10, 7, Storage::Fp16, true, 8, true, true, tensor, 16, 0},
      {"a value beyond fp16: CUDA cores, Q=40", 700, 24, 40, 16, Storage::Fp32, true, 2, true, true, scalar, 32, 70000.0f},
      {"a value beyond fp16: CUDA cores, Q=5", 500, 37, 5, 10, Storage::Fp32, false, 3, false, false, scalar, 8, 70000.0f},
  };
  int failures = 0;
  for (const Case& c : cases) failures += runCase(c);
  return failures == 0 ? 0 : 1;
}
