// Vectorised inner loops and the CPU feature check that selects them. The AVX2
// kernels live in simd_avx2.cpp with function-level target attributes, so the
// rest of the addon is built for baseline x86-64 and still loads (and falls
// back to scalar loops) on a CPU without AVX2/FMA/F16C.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chronoql {

enum class CpuKernel : uint8_t { Scalar = 0, Avx2 = 1 };

// Best kernel this CPU supports, unless CHRONOQL_CPU_KERNEL=scalar asks for the
// portable loops (used by tests to exercise both paths on one machine).
CpuKernel activeCpuKernel();
const char* cpuKernelName(CpuKernel kernel);
bool cpuSupportsAvx2Fma();

// Receives candidate scores from a tile kernel. Called only when at least one
// lane reached its threshold, i.e. rarely once the top-k lists have filled up.
// rowSlot indexes the tile's row list; laneMask has bit j set when query lane j
// reached thresholds[j]; scores[j] holds lane j's score.
using CandidateSink = void (*)(void* context, uint32_t rowSlot, uint32_t laneMask, const float* scores);

// Number of query lanes of the packed kernel and the rows it handles at once.
constexpr uint32_t kPackedQueryLanes = 16;
constexpr uint32_t kPackedRowGroup = 6;
// Small-batch kernel: at most this many queries per pass.
constexpr uint32_t kRowDotMaxQueries = 4;

#if defined(__x86_64__) || defined(_M_X64)
#define CHRONOQL_HAVE_AVX2_KERNELS 1

// Scores 16 packed query lanes (layout [dimension][16], unused lanes zero)
// against rows given by pointer (fp32), rowCount a multiple of
// kPackedRowGroup (callers pad with a repeated pointer). thresholds has 16
// entries and is re-read after every sink call.
void scanPackedQ16Avx2(const float* packedQueries, uint32_t dimension, const float* const* rows, uint32_t rowCount,
                       const float* thresholds, CandidateSink sink, void* context);

// Scores queryCount (1..4) row-major fp32 queries against rows given by
// pointer, stored as fp32 (rowsAreHalf false) or fp16 bits (true).
void scanRowDotAvx2(const float* queries, uint32_t queryCount, uint32_t dimension, const void* const* rows,
                    uint32_t rowCount, bool rowsAreHalf, const float* thresholds, CandidateSink sink, void* context);

void halfToFloatAvx2(const uint16_t* source, float* destination, size_t count);
void floatToHalfAvx2(const float* source, uint16_t* destination, size_t count);
// Sums the data as 64-bit integers with wide loads: used to measure how fast the
// index can be streamed from memory (the bound of a Q=1 search).
uint64_t streamReadAvx2(const void* data, size_t bytes);
#endif

// Portable conversions (dispatch to AVX2 when available).
void floatToHalf(const float* source, uint16_t* destination, size_t count);

}  // namespace chronoql
