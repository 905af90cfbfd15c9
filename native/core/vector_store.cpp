#include "vector_store.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "half.h"
#include "simd.h"

namespace chronoql {

namespace {

constexpr size_t kChunkAlignment = 64;
// Trailing chunks smaller than this are merged with the next append so that
// the scan always sees long contiguous runs (cheap: at most this many rows are
// copied per append).
constexpr uint32_t kCoalesceRows = 4096;
constexpr double kMaxLoadFactor = 0.7;

void* allocateAligned(size_t bytes) {
  const size_t rounded = std::max<size_t>(kChunkAlignment, (bytes + kChunkAlignment - 1) / kChunkAlignment * kChunkAlignment);
  void* p = std::aligned_alloc(kChunkAlignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

size_t alignedSize(size_t bytes) {
  return std::max<size_t>(kChunkAlignment, (bytes + kChunkAlignment - 1) / kChunkAlignment * kChunkAlignment);
}

}  // namespace

void AlignedFree::operator()(void* p) const { std::free(p); }

bool allFinite(const float* values, size_t count) {
  // Summing x*0 turns any NaN/Inf into NaN and keeps finite inputs at 0, and
  // vectorises well; -ffast-math is never used for this file.
  // Eight independent partial sums let the compiler vectorise without
  // reassociating (which it may not do for floats without -ffast-math).
  float probe[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    for (size_t lane = 0; lane < 8; ++lane) probe[lane] += values[i + lane] * 0.0f;
  }
  for (; i < count; ++i) probe[0] += values[i] * 0.0f;
  float total = 0.0f;
  for (float p : probe) total += p;
  return total == 0.0f;
}

static double euclideanNorm(const float* source, uint32_t dimension) {
  double sum = 0.0;
  for (uint32_t i = 0; i < dimension; ++i) sum += static_cast<double>(source[i]) * source[i];
  return std::sqrt(sum);
}

void normaliseInto(const float* source, uint32_t dimension, float* destination) {
  const double norm = euclideanNorm(source, dimension);
  if (!(norm > 0.0)) throw std::invalid_argument("vector has zero norm; cosine needs a non-zero vector");
  // Division (not multiplication by 1/norm) so the TypeScript reference,
  // which divides in double precision, produces bit-identical rows.
  for (uint32_t i = 0; i < dimension; ++i) destination[i] = static_cast<float>(source[i] / norm);
}

// ---------------------------------------------------------------------------
// IdToRowMap

void IdToRowMap::clear() {
  slots_.clear();
  slots_.shrink_to_fit();
  used_ = 0;
}

size_t IdToRowMap::slotFor(RowId id) const {
  // Fibonacci hashing spreads consecutive ids (the common case) across slots.
  return static_cast<size_t>((static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ull) >> 32) & (slots_.size() - 1);
}

uint32_t IdToRowMap::find(RowId id, const RowId* ids) const {
  if (slots_.empty()) return kNoRow;
  const size_t mask = slots_.size() - 1;
  for (size_t s = slotFor(id);; s = (s + 1) & mask) {
    const uint32_t row = slots_[s];
    if (row == kNoRow) return kNoRow;
    if (ids[row] == id) return row;
  }
}

void IdToRowMap::rehash(size_t capacity, const RowId* ids) {
  std::vector<uint32_t> old;
  old.swap(slots_);
  slots_.assign(capacity, kNoRow);
  const size_t mask = capacity - 1;
  for (const uint32_t row : old) {
    if (row == kNoRow) continue;
    size_t s = slotFor(ids[row]);
    while (slots_[s] != kNoRow) s = (s + 1) & mask;
    slots_[s] = row;
  }
}

void IdToRowMap::reserveFor(size_t entries, const RowId* ids) {
  if (static_cast<double>(entries) <= kMaxLoadFactor * static_cast<double>(slots_.size())) return;
  size_t capacity = 16;
  while (static_cast<double>(entries) > kMaxLoadFactor * static_cast<double>(capacity)) capacity *= 2;
  rehash(capacity, ids);
}

void IdToRowMap::assign(RowId id, uint32_t row, const RowId* ids) {
  reserveFor(used_ + 1, ids);
  const size_t mask = slots_.size() - 1;
  for (size_t s = slotFor(id);; s = (s + 1) & mask) {
    const uint32_t existing = slots_[s];
    if (existing == kNoRow) {
      slots_[s] = row;
      ++used_;
      return;
    }
    if (ids[existing] == id) {  // a re-added id now refers to its newest row
      slots_[s] = row;
      return;
    }
  }
}

// ---------------------------------------------------------------------------
// FlatVectorStore

FlatVectorStore::FlatVectorStore(uint32_t dimension, Storage storage, Metric metric)
    : dimension_(dimension), storage_(storage), metric_(metric) {
  if (dimension == 0 || dimension > kMaxDimension) {
    throw std::invalid_argument("dimension must be an integer in [1, " + std::to_string(kMaxDimension) + "]");
  }
}

size_t FlatVectorStore::memoryBytes() const {
  size_t bytes = sizeof(*this) + chunks_.capacity() * sizeof(RowChunk);
  for (const auto& chunk : chunks_) bytes += alignedSize(static_cast<size_t>(chunk.rows) * rowBytes());
  bytes += ids_.capacity() * sizeof(RowId) + validFrom_.capacity() * sizeof(IndexTime) + validTo_.capacity() * sizeof(IndexTime) +
           deleted_.capacity() * sizeof(uint8_t);
  bytes += idToRow_.memoryBytes();
  return bytes;
}

const void* FlatVectorStore::rowData(uint32_t row) const {
  // Chunks are few (large appends) so a binary search over them is cheap.
  auto it = std::upper_bound(chunks_.begin(), chunks_.end(), row,
                             [](uint32_t r, const RowChunk& c) { return r < c.firstRow; });
  const RowChunk& chunk = *(it - 1);
  return static_cast<const char*>(chunk.data.get()) + static_cast<size_t>(row - chunk.firstRow) * rowBytes();
}

uint32_t FlatVectorStore::findLiveRow(RowId id) const {
  const uint32_t row = idToRow_.find(id, ids_.data());
  return (row == kNoRow || deleted_[row]) ? kNoRow : row;
}

template <typename T>
void FlatVectorStore::growMetadata(std::vector<T>& vec, size_t needed) {
  // 1/8 growth instead of doubling: metadata slack stays under ~2 bytes a row.
  if (needed <= vec.capacity()) return;
  vec.reserve(std::max(needed, vec.capacity() + vec.capacity() / 8));
}

void FlatVectorStore::encodeRow(const float* source, double norm, void* destination) const {
  if (storage_ == Storage::Fp32) {
    auto* out = static_cast<float*>(destination);
    if (norm == 1.0) {
      std::memcpy(out, source, dimension_ * sizeof(float));
    } else {
      for (uint32_t i = 0; i < dimension_; ++i) out[i] = static_cast<float>(source[i] / norm);
    }
    return;
  }
  auto* out = static_cast<uint16_t*>(destination);
  if (norm == 1.0) {
    floatToHalf(source, out, dimension_);
  } else {
    std::vector<float> scaled(dimension_);
    for (uint32_t i = 0; i < dimension_; ++i) scaled[i] = static_cast<float>(source[i] / norm);
    floatToHalf(scaled.data(), out, dimension_);
  }
}

void FlatVectorStore::checkBatchIds(const RowId* ids, size_t count) const {
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] == kNoId) throw std::invalid_argument("ids: 4294967295 is reserved and cannot be used as an id");
  }
  std::vector<RowId> sorted(ids, ids + count);
  std::sort(sorted.begin(), sorted.end());
  const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) throw std::invalid_argument("ids: id " + std::to_string(*dup) + " appears twice in the batch");
}

void FlatVectorStore::checkNotLive(const RowId* ids, size_t count) const {
  if (static_cast<uint64_t>(ids_.size()) + count >= static_cast<uint64_t>(kNoRow)) {
    throw std::invalid_argument("ids: the index cannot hold more than 2^32-2 rows");
  }
  for (size_t i = 0; i < count; ++i) {
    if (findLiveRow(ids[i]) != kNoRow) {
      throw std::invalid_argument("ids: id " + std::to_string(ids[i]) + " is already in the index (remove it first)");
    }
  }
}

FlatVectorStore::PreparedRows FlatVectorStore::prepare(const RowId* ids, const float* vectors, const IndexTime* validFrom,
                                                       const IndexTime* validTo, size_t count) const {
  const size_t d = dimension_;
  checkBatchIds(ids, count);
  std::vector<double> norms(count, 1.0);
  for (size_t i = 0; i < count; ++i) {
    if (validFrom[i] >= validTo[i]) {
      throw std::invalid_argument("validTo: row " + std::to_string(i) + " has validTo <= validFrom (" +
                                  std::to_string(validTo[i]) + " <= " + std::to_string(validFrom[i]) + ")");
    }
    const float* row = vectors + i * d;
    if (!allFinite(row, d)) throw std::invalid_argument("vectors: row " + std::to_string(i) + " contains NaN or Infinity");
    if (metric_ == Metric::Cosine) {
      norms[i] = euclideanNorm(row, dimension_);
      if (!(norms[i] > 0.0)) {
        throw std::invalid_argument("vectors: row " + std::to_string(i) + " has zero norm (the cosine metric needs a direction)");
      }
      if (!std::isfinite(norms[i])) throw std::invalid_argument("vectors: row " + std::to_string(i) + " overflows its norm");
    }
  }
  PreparedRows prepared;
  prepared.count = count;
  prepared.ids.assign(ids, ids + count);
  prepared.validFrom.assign(validFrom, validFrom + count);
  prepared.validTo.assign(validTo, validTo + count);
  if (count == 0) return prepared;
  const size_t bytesPerRow = rowBytes();
  prepared.rows.reset(allocateAligned(count * bytesPerRow));
  auto* out = static_cast<char*>(prepared.rows.get());
  for (size_t i = 0; i < count; ++i) encodeRow(vectors + i * d, norms[i], out + i * bytesPerRow);
  return prepared;
}

void FlatVectorStore::commit(PreparedRows&& rows) {
  if (rows.count == 0) return;
  checkNotLive(rows.ids.data(), rows.count);
  const char* source = static_cast<const char*>(rows.rows.get());
  const size_t bytesPerRow = rowBytes();
  link(rows.ids.data(), rows.validFrom.data(), rows.validTo.data(), rows.count, std::move(rows.rows),
       [source, bytesPerRow](size_t first, size_t n, void* destination) {
         std::memcpy(destination, source + first * bytesPerRow, n * bytesPerRow);
       });
}

void FlatVectorStore::append(const RowId* ids, const float* vectors, const IndexTime* validFrom, const IndexTime* validTo,
                             size_t count) {
  commit(prepare(ids, vectors, validFrom, validTo, count));
}

void FlatVectorStore::appendEncoded(const RowId* ids, const IndexTime* validFrom, const IndexTime* validTo, size_t count,
                                    const std::function<void(size_t, size_t, void*)>& fillRows) {
  if (count == 0) return;
  checkBatchIds(ids, count);
  checkNotLive(ids, count);
  link(ids, validFrom, validTo, count, nullptr, fillRows);
}

// Adds `count` rows whose ids are known to be new. The row data is either a
// ready buffer (`encodedRows`, adopted as a chunk of its own when possible) or
// written by `fillRows`. Everything that can fail happens before the first
// change, so a failure leaves the store as it was.
void FlatVectorStore::link(const RowId* ids, const IndexTime* validFrom, const IndexTime* validTo, size_t count,
                           std::unique_ptr<void, AlignedFree> encodedRows,
                           const std::function<void(size_t, size_t, void*)>& fillRows) {
  const size_t newTotal = ids_.size() + count;
  growMetadata(ids_, newTotal);
  growMetadata(validFrom_, newTotal);
  growMetadata(validTo_, newTotal);
  growMetadata(deleted_, newTotal);
  chunks_.reserve(chunks_.size() + 1);
  idToRow_.reserveFor(idToRow_.size() + count, ids_.data());

  const size_t bytesPerRow = rowBytes();
  const uint32_t firstNewRow = static_cast<uint32_t>(ids_.size());
  // Only small appends onto a small last chunk are merged; a large batch gets
  // its own chunk (the prepared buffer itself), so it is never copied twice.
  if (!chunks_.empty() && chunks_.back().rows < kCoalesceRows && count < kCoalesceRows) {
    RowChunk& last = chunks_.back();
    const size_t keptBytes = static_cast<size_t>(last.rows) * bytesPerRow;
    std::unique_ptr<void, AlignedFree> merged(allocateAligned(keptBytes + count * bytesPerRow));
    std::memcpy(merged.get(), last.data.get(), keptBytes);
    fillRows(0, count, static_cast<char*>(merged.get()) + keptBytes);
    last.data = std::move(merged);
    last.rows += static_cast<uint32_t>(count);
  } else {
    RowChunk chunk;
    if (encodedRows) {
      chunk.data = std::move(encodedRows);  // the prepared buffer becomes the chunk: no copy
    } else {
      chunk.data.reset(allocateAligned(count * bytesPerRow));
      fillRows(0, count, chunk.data.get());
    }
    chunk.firstRow = firstNewRow;
    chunk.rows = static_cast<uint32_t>(count);
    chunks_.push_back(std::move(chunk));
  }

  for (size_t i = 0; i < count; ++i) {
    ids_.push_back(ids[i]);
    validFrom_.push_back(validFrom[i]);
    validTo_.push_back(validTo[i]);
    deleted_.push_back(0);
    idToRow_.assign(ids[i], firstNewRow + static_cast<uint32_t>(i), ids_.data());
  }
  liveRows_ += count;
}

size_t FlatVectorStore::remove(const RowId* ids, size_t count) {
  size_t removed = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t row = findLiveRow(ids[i]);
    if (row == kNoRow) continue;
    deleted_[row] = 1;
    --liveRows_;
    ++removed;
  }
  if (removed != 0) ++metadataVersion_;
  return removed;
}

size_t FlatVectorStore::invalidate(const RowId* ids, const IndexTime* validTo, size_t count) {
  // Checked whole first, so a bad entry changes nothing. validTo == validFrom is allowed:
  // a version created and superseded within one time unit was never valid at any instant.
  for (size_t i = 0; i < count; ++i) {
    const uint32_t row = findLiveRow(ids[i]);
    if (row != kNoRow && validTo[i] < validFrom_[row]) {
      throw std::invalid_argument("validTo[" + std::to_string(i) + "] (" + std::to_string(validTo[i]) + ") is before validFrom (" +
                                  std::to_string(validFrom_[row]) + ") of id " + std::to_string(ids[i]));
    }
  }
  // Only rows whose end moves count: closing a row again at the same time (a sync re-reading
  // its overlap window) is no change.
  size_t changed = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint32_t row = findLiveRow(ids[i]);
    if (row == kNoRow || validTo_[row] == validTo[i]) continue;
    validTo_[row] = validTo[i];
    ++changed;
  }
  if (changed != 0) ++metadataVersion_;
  return changed;
}

}  // namespace chronoql
