#include "vector_index.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>

#include "../cuda/cuda_backend.h"
#include "cpu_search.h"

namespace chronoql {

VectorIndex::VectorIndex(uint32_t dimension, Storage storage, Metric metric, DevicePreference device)
    : store_(dimension, storage, metric), cpu_(std::make_unique<CpuSearchBackend>()) {
  if (device == DevicePreference::Cuda || (device == DevicePreference::Auto && !cudaDevices().empty())) {
    accelerator_ = createCudaSearchBackend(0);  // throws with the reason when no device exists
  }
  primary_ = accelerator_ ? accelerator_.get() : cpu_.get();
  publishCounters();
}

void VectorIndex::publishCounters() {
  liveRows_.store(store_.liveCount(), std::memory_order_release);
  rowCount_.store(store_.rowCount(), std::memory_order_release);
  memoryBytes_.store(store_.memoryBytes(), std::memory_order_release);
}

void VectorIndex::add(const RowId* ids, const float* vectors, const IndexTime* validFrom, const IndexTime* validTo, size_t count) {
  // Validation, normalisation and encoding touch only the batch, so they run
  // before the exclusive lock; searches are blocked only while rows are linked.
  FlatVectorStore::PreparedRows prepared = store_.prepare(ids, vectors, validFrom, validTo, count);
  std::unique_lock<std::shared_mutex> lock(store_.mutex());
  store_.commit(std::move(prepared));
  publishCounters();
}

size_t VectorIndex::remove(const RowId* ids, size_t count) {
  std::unique_lock<std::shared_mutex> lock(store_.mutex());
  const size_t removed = store_.remove(ids, count);
  publishCounters();
  return removed;
}

size_t VectorIndex::invalidate(const RowId* ids, const IndexTime* validTo, size_t count) {
  std::unique_lock<std::shared_mutex> lock(store_.mutex());
  return store_.invalidate(ids, validTo, count);
}

void VectorIndex::prepareQuery(const float* raw, float* prepared, uint32_t index) const {
  const uint32_t d = dimension();
  if (!allFinite(raw, d)) throw std::invalid_argument("queries: query " + std::to_string(index) + " contains NaN or Infinity");
  if (store_.metric() == Metric::Cosine) {
    try {
      normaliseInto(raw, d, prepared);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("queries: query " + std::to_string(index) + " has zero norm (the cosine metric needs a direction)");
    }
  } else {
    std::copy(raw, raw + d, prepared);
  }
}

SearchResults VectorIndex::search(const float* queries, uint32_t queryCount, uint32_t k, const IndexTime* asOf,
                                  const uint32_t* excludeOffsets, const RowId* excludeIds, CpuKernel kernel,
                                  SearchPlacement placement) const {
  const uint32_t d = dimension();
  std::vector<float> prepared(static_cast<size_t>(queryCount) * d);
  for (uint32_t q = 0; q < queryCount; ++q) prepareQuery(queries + static_cast<size_t>(q) * d, prepared.data() + static_cast<size_t>(q) * d, q);
  return runPrepared(prepared, queryCount, k, asOf, excludeOffsets, excludeIds, kernel, placement);
}

SearchResults VectorIndex::searchBlended(const float* firstQueries, const float* secondQueries, const float* weights,
                                         uint32_t queryCount, uint32_t k, const IndexTime* asOf,
                                         const uint32_t* excludeOffsets, const RowId* excludeIds,
                                         CpuKernel kernel, SearchPlacement placement) const {
  const uint32_t d = dimension();
  std::vector<float> prepared(static_cast<size_t>(queryCount) * d);
  std::vector<float> first(d), second(d);
  for (uint32_t q = 0; q < queryCount; ++q) {
    const float w = weights[q];
    if (!(w >= 0.0f && w <= 1.0f)) throw std::invalid_argument("omega: weight " + std::to_string(q) + " must be in [0, 1]");
    prepareQuery(firstQueries + static_cast<size_t>(q) * d, first.data(), q);
    prepareQuery(secondQueries + static_cast<size_t>(q) * d, second.data(), q);
    float* out = prepared.data() + static_cast<size_t>(q) * d;
    // Not renormalised: the blended score is a weighted sum, not a cosine.
    for (uint32_t i = 0; i < d; ++i) out[i] = (1.0f - w) * first[i] + w * second[i];
  }
  return runPrepared(prepared, queryCount, k, asOf, excludeOffsets, excludeIds, kernel, placement);
}

SearchResults VectorIndex::runPrepared(const std::vector<float>& prepared, uint32_t queryCount, uint32_t k,
                                       const IndexTime* asOf, const uint32_t* excludeOffsets, const RowId* excludeIds,
                                       CpuKernel kernel, SearchPlacement placement) const {
  if (k == 0 || k > kMaxK) throw std::invalid_argument("k must be in [1, " + std::to_string(kMaxK) + "]");
  if (queryCount > kMaxQueriesPerCall) throw std::invalid_argument("queries: at most " + std::to_string(kMaxQueriesPerCall) + " per call");

  // Sorted copies of the exclusion lists let the scan use binary search.
  std::vector<RowId> sortedExcludes;
  if (excludeOffsets != nullptr) {
    sortedExcludes.assign(excludeIds, excludeIds + excludeOffsets[queryCount]);
    for (uint32_t q = 0; q < queryCount; ++q) {
      std::sort(sortedExcludes.begin() + excludeOffsets[q], sortedExcludes.begin() + excludeOffsets[q + 1]);
    }
  }
  SearchRequest request;
  request.queries = prepared.data();
  request.queryCount = queryCount;
  request.k = k;
  request.asOf = asOf;
  request.excludeOffsets = excludeOffsets;
  request.excludeIds = sortedExcludes.data();
  request.cpuKernel = kernel;

  SearchResults results;
  std::shared_lock<std::shared_mutex> lock(store_.mutex());
  // An index served on the host gives its device memory back.
  if (placement == SearchPlacement::Host) primary_->releaseDeviceMemory();
  SearchBackend* backend = placement == SearchPlacement::Preferred && k <= primary_->maxK() ? primary_ : cpu_.get();
  backend->search(store_, request, results);
  return results;
}

size_t VectorIndex::deviceMemoryBytes() const { return primary_->deviceMemoryBytes(); }

DeviceFootprint VectorIndex::deviceFootprint() const {
  DeviceFootprint footprint;
  footprint.requiredBytes = primary_->deviceBytesFor(rowCount_.load(std::memory_order_acquire), store_.rowBytes());
  footprint.heldBytes = primary_->deviceMemoryBytes();
  return footprint;
}

double VectorIndex::measureStreamSeconds() const {
  std::shared_lock<std::shared_mutex> lock(store_.mutex());
  return primary_->measureStreamSeconds(store_);
}

// ---------------------------------------------------------------------------
// File format (little-endian):
//   header (56 bytes): magic "CQLVIDX\0", formatVersion u32, dimension u32,
//     storage u8, metric u8, reserved u16, reserved u32, rowCount u64,
//     metadataChecksum u64, payloadChecksum u64, headerChecksum u64
//   ids u32[rowCount], validFrom i32[rowCount], validTo i32[rowCount]
//   rows: rowCount * dimension * (4 | 2) bytes
// Every part is checksummed and the file size must be exact. The payload hash
// takes eight bytes per step, so it costs a fraction of reading the file.

namespace {

constexpr char kMagic[8] = {'C', 'Q', 'L', 'V', 'I', 'D', 'X', '\0'};
constexpr uint32_t kFormatVersion = 2;

#pragma pack(push, 1)
struct FileHeader {
  char magic[8];
  uint32_t formatVersion;
  uint32_t dimension;
  uint8_t storage;
  uint8_t metric;
  uint16_t reserved16;
  uint32_t reserved32;
  uint64_t rowCount;
  uint64_t metadataChecksum;
  uint64_t payloadChecksum;
  uint64_t headerChecksum;
};
#pragma pack(pop)
static_assert(sizeof(FileHeader) == 56, "file header layout");

constexpr uint64_t kHashSeed = 0xcbf29ce484222325ull;

uint64_t fnv1a(const void* data, size_t bytes, uint64_t hash = kHashSeed) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// FNV-1a over 64-bit words, then the trailing bytes: each step is a bijection of
// the running hash, so any change confined to one word always changes the result.
uint64_t hashRows(const void* data, size_t rows, size_t rowBytes, uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t r = 0; r < rows; ++r, p += rowBytes) {
    size_t i = 0;
    for (; i + 8 <= rowBytes; i += 8) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      hash = (hash ^ word) * 0x100000001b3ull;
    }
    hash = fnv1a(p + i, rowBytes - i, hash);
  }
  return hash;
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

[[noreturn]] void failIo(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " '" + path + "': " + std::strerror(errno));
}

void writeAll(std::FILE* f, const void* data, size_t bytes, const std::string& path) {
  if (bytes != 0 && std::fwrite(data, 1, bytes, f) != bytes) failIo("cannot write index file", path);
}

void readAll(std::FILE* f, void* data, size_t bytes, const std::string& path) {
  if (bytes != 0 && std::fread(data, 1, bytes, f) != bytes) {
    throw std::runtime_error("index file '" + path + "' is truncated or unreadable");
  }
}

}  // namespace

void VectorIndex::save(const std::string& path) const {
  static_assert(sizeof(RowId) == 4 && sizeof(IndexTime) == 4, "file layout assumes 32-bit ids and days");
  std::shared_lock<std::shared_mutex> lock(store_.mutex());
  std::vector<uint32_t> liveRows;
  liveRows.reserve(store_.liveCount());
  for (uint32_t row = 0; row < store_.rowCount(); ++row) {
    if (!store_.deleted()[row]) liveRows.push_back(row);
  }
  const size_t n = liveRows.size();
  std::vector<RowId> ids(n);
  std::vector<IndexTime> from(n), to(n);
  for (size_t i = 0; i < n; ++i) {
    ids[i] = store_.ids()[liveRows[i]];
    from[i] = store_.validFrom()[liveRows[i]];
    to[i] = store_.validTo()[liveRows[i]];
  }

  FileHeader header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.formatVersion = kFormatVersion;
  header.dimension = store_.dimension();
  header.storage = static_cast<uint8_t>(store_.storage());
  header.metric = static_cast<uint8_t>(store_.metric());
  header.rowCount = n;
  uint64_t meta = fnv1a(ids.data(), n * sizeof(RowId));
  meta = fnv1a(from.data(), n * sizeof(IndexTime), meta);
  header.metadataChecksum = fnv1a(to.data(), n * sizeof(IndexTime), meta);
  const size_t rowBytes = store_.rowBytes();
  uint64_t payload = kHashSeed;
  for (uint32_t row : liveRows) payload = hashRows(store_.rowData(row), 1, rowBytes, payload);
  header.payloadChecksum = payload;
  header.headerChecksum = fnv1a(&header, offsetof(FileHeader, headerChecksum));

  const std::string temporary = path + ".tmp";
  {
    File file(std::fopen(temporary.c_str(), "wb"));
    if (!file) failIo("cannot create index file", temporary);
    std::setvbuf(file.get(), nullptr, _IOFBF, 1 << 20);
    writeAll(file.get(), &header, sizeof header, temporary);
    writeAll(file.get(), ids.data(), n * sizeof(RowId), temporary);
    writeAll(file.get(), from.data(), n * sizeof(IndexTime), temporary);
    writeAll(file.get(), to.data(), n * sizeof(IndexTime), temporary);
    // Rows are written in runs of consecutive live rows to keep writes large.
    size_t i = 0;
    while (i < n) {
      size_t run = 1;
      while (i + run < n && liveRows[i + run] == liveRows[i] + run && store_.rowData(liveRows[i] + static_cast<uint32_t>(run)) ==
                                                                          static_cast<const char*>(store_.rowData(liveRows[i])) + run * rowBytes) {
        ++run;
      }
      writeAll(file.get(), store_.rowData(liveRows[i]), run * rowBytes, temporary);
      i += run;
    }
    if (std::fflush(file.get()) != 0) failIo("cannot write index file", temporary);
    if (std::fclose(file.release()) != 0) failIo("cannot close index file", temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    failIo("cannot move index file into place at", path);
  }
}

std::unique_ptr<VectorIndex> VectorIndex::load(const std::string& path, DevicePreference device) {
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) failIo("cannot open index file", path);
  std::setvbuf(file.get(), nullptr, _IOFBF, 1 << 20);
  FileHeader header{};
  readAll(file.get(), &header, sizeof header, path);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) throw std::runtime_error("'" + path + "' is not a ChronoQL index file");
  if (header.headerChecksum != fnv1a(&header, offsetof(FileHeader, headerChecksum))) {
    throw std::runtime_error("index file '" + path + "' has a corrupt header");
  }
  if (header.formatVersion != kFormatVersion) {
    throw std::runtime_error("index file '" + path + "' has format version " + std::to_string(header.formatVersion) +
                             "; this build reads version " + std::to_string(kFormatVersion));
  }
  if (header.dimension == 0 || header.dimension > kMaxDimension || header.storage > 1 || header.metric > 1 ||
      header.rowCount >= kNoRow) {
    throw std::runtime_error("index file '" + path + "' has an invalid header");
  }
  const auto storage = static_cast<Storage>(header.storage);
  const size_t n = header.rowCount;
  const size_t rowBytes = static_cast<size_t>(header.dimension) * bytesPerElement(storage);
  const uint64_t expectedSize = sizeof(FileHeader) + n * (sizeof(RowId) + 2 * sizeof(IndexTime)) + n * rowBytes;
  if (std::fseek(file.get(), 0, SEEK_END) != 0) failIo("cannot read index file", path);
  const long actualSize = std::ftell(file.get());
  if (actualSize < 0 || static_cast<uint64_t>(actualSize) != expectedSize) {
    throw std::runtime_error("index file '" + path + "' has " + std::to_string(actualSize) + " bytes, expected " +
                             std::to_string(expectedSize) + " (truncated or corrupt)");
  }
  std::fseek(file.get(), sizeof(FileHeader), SEEK_SET);

  std::vector<RowId> ids(n);
  std::vector<IndexTime> from(n), to(n);
  readAll(file.get(), ids.data(), n * sizeof(RowId), path);
  readAll(file.get(), from.data(), n * sizeof(IndexTime), path);
  readAll(file.get(), to.data(), n * sizeof(IndexTime), path);
  uint64_t meta = fnv1a(ids.data(), n * sizeof(RowId));
  meta = fnv1a(from.data(), n * sizeof(IndexTime), meta);
  if (fnv1a(to.data(), n * sizeof(IndexTime), meta) != header.metadataChecksum) {
    throw std::runtime_error("index file '" + path + "' has corrupt row metadata");
  }

  auto index = std::make_unique<VectorIndex>(header.dimension, storage, static_cast<Metric>(header.metric), device);
  // Rows are read straight into the new chunk: no second copy of the matrix.
  uint64_t payload = kHashSeed;
  index->store_.appendEncoded(ids.data(), from.data(), to.data(), n, [&](size_t, size_t count, void* destination) {
    readAll(file.get(), destination, count * rowBytes, path);
    payload = hashRows(destination, count, rowBytes, payload);
  });
  if (payload != header.payloadChecksum) throw std::runtime_error("index file '" + path + "' has corrupt vectors");
  index->publishCounters();
  return index;
}

}  // namespace chronoql
