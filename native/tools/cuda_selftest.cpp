// GPU vs CPU agreement check and timing harness for the CUDA backend, for a
// machine with a GPU but no Node.js. Built by CMake (target
// chronoql_cuda_selftest) when nvcc is available:
//
//   cmake -S . -B build-selftest -DCHRONOQL_BUILD_SELFTEST=ON
//   cmake --build build-selftest --target chronoql_cuda_selftest -j
//   build-selftest/chronoql_cuda_selftest                # agreement checks
//   build-selftest/chronoql_cuda_selftest --quick        # the same without the 100k-row case (for compute-sanitizer)
//   build-selftest/chronoql_cuda_selftest --bench N D Q K [fp16]   # timings (JSON)
//
// The cases reach every scan kernel (search_kernels.cuh): the stream kernel
// (Q <= 4), the tensor kernel with query tiles of 16, 64 and 128, and the
// CUDA-core kernel (a value beyond fp16). Exit status 0 = all checks passed,
// 1 = a mismatch, 2 = no device.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../core/cpu_search.h"
#include "../core/vector_index.h"
#include "../cuda/cuda_backend.h"

using namespace chronoql;

namespace {

struct Dataset {
  uint32_t dimension;
  std::vector<RowId> ids;
  std::vector<float> vectors;
  std::vector<IndexTime> validFrom;
  std::vector<IndexTime> validTo;
};

Dataset makeDataset(uint32_t rows, uint32_t dimension, uint32_t seed, bool integerValues) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small(-3, 3);
  std::uniform_int_distribution<int> day(0, 99);
  Dataset data;
  data.dimension = dimension;
  data.ids.resize(rows);
  data.vectors.resize(static_cast<size_t>(rows) * dimension);
  data.validFrom.resize(rows);
  data.validTo.resize(rows);
  for (uint32_t r = 0; r < rows; ++r) {
    // ids not monotonic in row order (a bijection mod a prime), so the id tie-break is really exercised
    data.ids[r] = static_cast<uint32_t>((static_cast<uint64_t>(r) * 7919u) % 1000003u);
    for (uint32_t i = 0; i < dimension; ++i) {
      data.vectors[static_cast<size_t>(r) * dimension + i] = integerValues ? static_cast<float>(small(rng)) : uniform(rng);
    }
    data.validFrom[r] = day(rng);
    data.validTo[r] = (r % 3 == 0) ? data.validFrom[r] + 1 + day(rng) : kOpenEnd;
  }
  return data;
}

struct Case {
  std::string name;
  uint32_t rows, dimension, queries, k;
  Storage storage;
  Metric metric;
  bool integerValues;  // exact arithmetic: results must match bit for bit
  bool withExclusions;
  float largeValue = 0.0f;  // when non-zero, one row holds it (beyond fp16: the CUDA-core kernel)
};

// Compares the two result blocks: ids must match where scores are not within
// tolerance of a tie; scores within tolerance everywhere.
int compare(const Case& c, const SearchResults& cpu, const SearchResults& gpu, float tolerance) {
  int failures = 0;
  for (uint32_t q = 0; q < cpu.queryCount; ++q) {
    if (cpu.counts[q] != gpu.counts[q]) {
      std::printf("  [%s] query %u: count cpu=%u gpu=%u\n", c.name.c_str(), q, cpu.counts[q], gpu.counts[q]);
      ++failures;
      continue;
    }
    for (uint32_t j = 0; j < cpu.counts[q]; ++j) {
      const size_t i = static_cast<size_t>(q) * cpu.k + j;
      const float diff = std::fabs(cpu.scores[i] - gpu.scores[i]);
      // Scores must agree rank by rank. Ids may differ only between rows whose
      // scores are within tolerance (float summation order), and never on
      // exact-arithmetic data, where ties must be broken identically by id.
      const bool scoreMismatch = diff > tolerance;
      const bool idMismatch = cpu.ids[i] != gpu.ids[i] && c.integerValues;
      if (scoreMismatch || idMismatch) {
        std::printf("  [%s] query %u rank %u: cpu (%u, %.7f) gpu (%u, %.7f)\n", c.name.c_str(), q, j, cpu.ids[i],
                    cpu.scores[i], gpu.ids[i], gpu.scores[i]);
        if (++failures > 20) return failures;
      }
    }
  }
  return failures;
}

int runChecks(bool quick) {
  const std::vector<Case> cases = {
      {"fp32-cosine-small", 1000, 64, 5, 10, Storage::Fp32, Metric::Cosine, false, false},
      {"fp32-ip-ties", 3000, 24, 40, 16, Storage::Fp32, Metric::InnerProduct, true, true},
      {"fp32-d-not-multiple-of-8", 5000, 37, 33, 10, Storage::Fp32, Metric::Cosine, false, true},
      {"fp16-cosine", 20000, 384, 64, 10, Storage::Fp16, Metric::Cosine, false, false},
      {"fp32-large-k", 20000, 128, 9, 256, Storage::Fp32, Metric::Cosine, false, true},
      {"k-exceeds-valid-rows", 50, 16, 3, 100, Storage::Fp32, Metric::InnerProduct, true, false},
      {"fp16-stream-q1", 50000, 384, 1, 10, Storage::Fp16, Metric::Cosine, false, true},
      {"fp32-stream-q4-d37", 20000, 37, 4, 100, Storage::Fp32, Metric::Cosine, false, true},
      {"fp16-stream-q2-ties", 8000, 32, 2, 20, Storage::Fp16, Metric::InnerProduct, true, true},
      {"fp16-tensor-q16-ties", 20000, 32, 16, 20, Storage::Fp16, Metric::InnerProduct, true, true},
      {"fp16-tensor-q300", 30000, 128, 300, 10, Storage::Fp16, Metric::Cosine, false, true},
      {"fp32-tensor-q130-k100", 10000, 96, 130, 100, Storage::Fp32, Metric::Cosine, false, true},
      {"fp32-beyond-fp16-q40", 5000, 24, 40, 16, Storage::Fp32, Metric::InnerProduct, true, true, 70000.0f},
      {"fp32-beyond-fp16-q7", 5000, 40, 7, 10, Storage::Fp32, Metric::InnerProduct, true, false, 70000.0f},
      {"fp32-384-q256", 100000, 384, 256, 10, Storage::Fp32, Metric::Cosine, false, true},
  };
  int totalFailures = 0;
  for (const Case& c : cases) {
    if (quick && c.rows > 50000) continue;
    Dataset data = makeDataset(c.rows, c.dimension, 42, c.integerValues);
    if (c.largeValue != 0.0f) data.vectors[static_cast<size_t>(c.rows / 2) * c.dimension] = c.largeValue;
    VectorIndex gpuIndex(c.dimension, c.storage, c.metric, DevicePreference::Cuda);
    VectorIndex cpuIndex(c.dimension, c.storage, c.metric, DevicePreference::Cpu);
    gpuIndex.add(data.ids.data(), data.vectors.data(), data.validFrom.data(), data.validTo.data(), c.rows);
    cpuIndex.add(data.ids.data(), data.vectors.data(), data.validFrom.data(), data.validTo.data(), c.rows);
    // Remove and invalidate a few rows after the first search so the device
    // mirror has to refresh its metadata.
    Dataset queries = makeDataset(c.queries, c.dimension, 7, c.integerValues);
    std::vector<IndexTime> asOf(c.queries);
    for (uint32_t q = 0; q < c.queries; ++q) asOf[q] = static_cast<IndexTime>((q * 37) % 120);
    std::vector<uint32_t> offsets(c.queries + 1, 0);
    std::vector<RowId> excluded;
    if (c.withExclusions) {
      for (uint32_t q = 0; q < c.queries; ++q) {
        for (uint32_t e = 0; e < q % 5; ++e) excluded.push_back(data.ids[(q * 131 + e * 17) % c.rows]);
        offsets[q + 1] = static_cast<uint32_t>(excluded.size());
      }
    }
    const uint32_t* offsetPtr = c.withExclusions ? offsets.data() : nullptr;
    const float tolerance = (c.storage == Storage::Fp16 ? 2e-3f : 1e-4f) * (c.largeValue != 0.0f ? c.largeValue : 1.0f);
    for (int round = 0; round < 2; ++round) {
      if (round == 1) {
        std::vector<RowId> gone;
        std::vector<IndexTime> ends;
        for (uint32_t r = 0; r < c.rows; r += 11) gone.push_back(data.ids[r]);
        // Ended where they start, valid at no instant: an end before the start is refused.
        for (uint32_t r = 5; r < c.rows; r += 13) ends.push_back(data.validFrom[r]);
        std::vector<RowId> ended;
        for (uint32_t r = 5; r < c.rows; r += 13) ended.push_back(data.ids[r]);
        gpuIndex.remove(gone.data(), gone.size());
        cpuIndex.remove(gone.data(), gone.size());
        gpuIndex.invalidate(ended.data(), ends.data(), ended.size());
        cpuIndex.invalidate(ended.data(), ends.data(), ended.size());
      }
      SearchResults cpu = cpuIndex.search(queries.vectors.data(), c.queries, c.k, asOf.data(), offsetPtr, excluded.data());
      SearchResults gpu = gpuIndex.search(queries.vectors.data(), c.queries, c.k, asOf.data(), offsetPtr, excluded.data());
      const int failures = compare(c, cpu, gpu, tolerance);
      std::printf("%-28s round %d: %s\n", c.name.c_str(), round, failures == 0 ? "ok" : "MISMATCH");
      totalFailures += failures;
    }
  }
  {
    VectorIndex empty(16, Storage::Fp32, Metric::Cosine, DevicePreference::Cuda);
    std::vector<float> query(16, 1.0f);
    IndexTime asOf = 0;
    SearchResults r = empty.search(query.data(), 1, 5, &asOf, nullptr, nullptr);
    const bool ok = r.counts[0] == 0;
    std::printf("%-28s: %s\n", "empty-index", ok ? "ok" : "MISMATCH");
    totalFailures += ok ? 0 : 1;
  }
  return totalFailures == 0 ? 0 : 1;
}

int runBench(uint32_t rows, uint32_t dimension, uint32_t queries, uint32_t k, bool fp16) {
  Dataset data = makeDataset(std::min<uint32_t>(rows, 1u << 20), dimension, 1, false);
  VectorIndex index(dimension, fp16 ? Storage::Fp16 : Storage::Fp32, Metric::Cosine, DevicePreference::Cuda);
  // Add in slices (reusing the generated block with fresh ids) to bound host memory.
  const uint32_t block = static_cast<uint32_t>(data.ids.size());
  std::vector<RowId> ids(block);
  for (uint32_t added = 0; added < rows; added += block) {
    const uint32_t n = std::min(block, rows - added);
    for (uint32_t i = 0; i < n; ++i) ids[i] = added + i;
    index.add(ids.data(), data.vectors.data(), data.validFrom.data(), data.validTo.data(), n);
  }
  Dataset q = makeDataset(queries, dimension, 9, false);
  std::vector<IndexTime> asOf(queries, 90);
  index.search(q.vectors.data(), queries, k, asOf.data(), nullptr, nullptr);  // upload + warm-up
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto start = std::chrono::steady_clock::now();
    index.search(q.vectors.data(), queries, k, asOf.data(), nullptr, nullptr);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::printf("{\"backend\":\"cuda\",\"device\":\"%s\",\"n\":%u,\"d\":%u,\"q\":%u,\"k\":%u,\"storage\":\"%s\",\"seconds\":%.6f,"
              "\"qps\":%.2f,\"gflops\":%.2f}\n",
              cudaDevices()[0].name.c_str(), rows, dimension, queries, k, fp16 ? "fp16" : "fp32", best, queries / best,
              2.0 * rows * dimension * queries / best / 1e9);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (cudaDevices().empty()) {
    std::printf("no CUDA device: %s\n", cudaUnavailableReason().c_str());
    return 2;
  }
  std::printf("device: %s\n", cudaDevices()[0].name.c_str());
  try {
    if (argc >= 6 && std::strcmp(argv[1], "--bench") == 0) {
      return runBench(static_cast<uint32_t>(std::atoi(argv[2])), static_cast<uint32_t>(std::atoi(argv[3])),
                      static_cast<uint32_t>(std::atoi(argv[4])), static_cast<uint32_t>(std::atoi(argv[5])),
                      argc >= 7 && std::strcmp(argv[6], "fp16") == 0);
    }
    return runChecks(argc >= 2 && std::strcmp(argv[1], "--quick") == 0);
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    return 1;
  }
}
