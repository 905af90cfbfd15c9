// Shared vocabulary of the ChronoQL native core: ids, index time, storage and
// metric choices, the ordering of hits. Everything here is header-only and free
// of N-API so the core can be linked into test harnesses without Node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace chronoql {

// External row id chosen by the caller (e.g. a dense passage number).
using RowId = uint32_t;
// A point in index time, an int32 on whatever scale the caller picks (ChronoQL uses whole
// minutes since the epoch, src/domain/time.ts). Validity intervals are [validFrom, validTo).
using IndexTime = int32_t;

// validTo of a row that is still valid ("open" interval).
constexpr IndexTime kOpenEnd = std::numeric_limits<IndexTime>::max();
// Marks an empty result slot and is never a valid id, so it can also serve as
// a sentinel inside kernels.
constexpr RowId kNoId = std::numeric_limits<RowId>::max();
// Internal row index sentinel (rows are addressed by position in the store).
constexpr uint32_t kNoRow = std::numeric_limits<uint32_t>::max();

constexpr uint32_t kMaxDimension = 65536;
constexpr uint32_t kMaxK = 1024;
constexpr uint32_t kMaxQueriesPerCall = 65536;

enum class Storage : uint8_t { Fp32 = 0, Fp16 = 1 };
enum class Metric : uint8_t { Cosine = 0, InnerProduct = 1 };

inline size_t bytesPerElement(Storage s) { return s == Storage::Fp32 ? 4 : 2; }

// The single ranking rule used by every backend: higher score first, equal
// scores ordered by smaller id. Using one rule everywhere is what makes CPU and
// GPU results comparable element by element.
inline bool ranksBefore(float scoreA, RowId idA, float scoreB, RowId idB) {
  return scoreA > scoreB || (scoreA == scoreB && idA < idB);
}

struct Hit {
  float score;
  RowId id;
};

}  // namespace chronoql
