// AVX2 + FMA + F16C inner loops. Every function carries the target attribute
// itself (instead of -mavx2 for the whole file) so no inline function from a
// shared header is ever compiled here with AVX2 and picked by the linker for
// code that runs on older CPUs. Only intrinsics and raw pointers are used.
#include "simd.h"

#if defined(CHRONOQL_HAVE_AVX2_KERNELS)

#include <immintrin.h>

#include <cstring>

#define CHRONOQL_AVX2 __attribute__((target("avx2,fma,f16c")))
#define CHRONOQL_AVX2_INLINE __attribute__((target("avx2,fma,f16c"), always_inline)) inline

namespace chronoql {
namespace {

CHRONOQL_AVX2_INLINE float horizontalSum(__m256 v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  __m128 shuffled = _mm_movehdup_ps(sum);
  sum = _mm_add_ps(sum, shuffled);
  shuffled = _mm_movehl_ps(shuffled, sum);
  sum = _mm_add_ss(sum, shuffled);
  return _mm_cvtss_f32(sum);
}

// Lane mask selecting the first `count` (0..8) floats, for loads of a row tail
// that must not read past the end of the row.
CHRONOQL_AVX2_INLINE __m256i tailMask(uint32_t count) {
  alignas(32) static const int32_t ramp[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(count)),
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(ramp)));
}

template <bool Half>
CHRONOQL_AVX2_INLINE __m256 loadRow8(const void* row, uint32_t offset) {
  if constexpr (Half) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(row) + offset)));
  } else {
    return _mm256_loadu_ps(static_cast<const float*>(row) + offset);
  }
}

template <bool Half>
CHRONOQL_AVX2_INLINE __m256 loadRowTail(const void* row, uint32_t offset, uint32_t count, __m256i mask) {
  if constexpr (Half) {
    uint16_t padded[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::memcpy(padded, static_cast<const uint16_t*>(row) + offset, count * sizeof(uint16_t));
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(padded)));
  } else {
    (void)count;
    return _mm256_maskload_ps(static_cast<const float*>(row) + offset, mask);
  }
}

// Dot products of G queries (row-major, length `dimension`) with R rows,
// vectorised along the dimension; G*R accumulators stay in registers.
template <int G, int R, bool Half>
CHRONOQL_AVX2 void rowDotGroup(const float* queries, uint32_t dimension, const void* const* rows, uint32_t rowSlot,
                               const float* thresholds, CandidateSink sink, void* context) {
  const uint32_t vectorEnd = dimension & ~7u;
  const uint32_t tail = dimension - vectorEnd;
  __m256 acc[G][R];
  for (int g = 0; g < G; ++g)
    for (int r = 0; r < R; ++r) acc[g][r] = _mm256_setzero_ps();
  const void* rowPtr[R];
  for (int r = 0; r < R; ++r) rowPtr[r] = rows[rowSlot + r];

  // Rows of a tile are usually adjacent in memory, so the rows of the next
  // group start R rows further on; prefetching them while this group is
  // scored keeps enough reads in flight for the memory-bound small batches.
  constexpr uint32_t kElementBytes = Half ? 2 : 4;
  const size_t groupBytes = static_cast<size_t>(R) * dimension * kElementBytes;
  for (uint32_t k = 0; k < vectorEnd; k += 8) {
    if ((k * kElementBytes) % 64 == 0) {
      for (int r = 0; r < R; ++r) {
        _mm_prefetch(static_cast<const char*>(rowPtr[r]) + groupBytes + k * kElementBytes, _MM_HINT_T0);
      }
    }
    __m256 rowValues[R];
    for (int r = 0; r < R; ++r) rowValues[r] = loadRow8<Half>(rowPtr[r], k);
    for (int g = 0; g < G; ++g) {
      const __m256 q = _mm256_loadu_ps(queries + static_cast<size_t>(g) * dimension + k);
      for (int r = 0; r < R; ++r) acc[g][r] = _mm256_fmadd_ps(q, rowValues[r], acc[g][r]);
    }
  }
  if (tail != 0) {
    const __m256i mask = tailMask(tail);
    __m256 rowValues[R];
    for (int r = 0; r < R; ++r) rowValues[r] = loadRowTail<Half>(rowPtr[r], vectorEnd, tail, mask);
    for (int g = 0; g < G; ++g) {
      const __m256 q = _mm256_maskload_ps(queries + static_cast<size_t>(g) * dimension + vectorEnd, mask);
      for (int r = 0; r < R; ++r) acc[g][r] = _mm256_fmadd_ps(q, rowValues[r], acc[g][r]);
    }
  }

  for (int r = 0; r < R; ++r) {
    float scores[kRowDotMaxQueries];
    uint32_t laneMask = 0;
    for (int g = 0; g < G; ++g) {
      scores[g] = horizontalSum(acc[g][r]);
      if (scores[g] >= thresholds[g]) laneMask |= 1u << g;
    }
    if (laneMask != 0) sink(context, rowSlot + static_cast<uint32_t>(r), laneMask, scores);
  }
}

template <int G, int R, bool Half>
CHRONOQL_AVX2 void rowDotAll(const float* queries, uint32_t dimension, const void* const* rows, uint32_t rowCount,
                             const float* thresholds, CandidateSink sink, void* context) {
  uint32_t slot = 0;
  for (; slot + R <= rowCount; slot += R) {
    rowDotGroup<G, R, Half>(queries, dimension, rows, slot, thresholds, sink, context);
  }
  for (; slot < rowCount; ++slot) {
    rowDotGroup<G, 1, Half>(queries, dimension, rows, slot, thresholds, sink, context);
  }
}

template <bool Half>
CHRONOQL_AVX2 void rowDotDispatch(const float* queries, uint32_t queryCount, uint32_t dimension,
                                  const void* const* rows, uint32_t rowCount, const float* thresholds,
                                  CandidateSink sink, void* context) {
  // Register budget: 16 ymm registers hold G*R accumulators plus R row values.
  switch (queryCount) {
    case 1: rowDotAll<1, 6, Half>(queries, dimension, rows, rowCount, thresholds, sink, context); break;
    case 2: rowDotAll<2, 4, Half>(queries, dimension, rows, rowCount, thresholds, sink, context); break;
    case 3: rowDotAll<3, 3, Half>(queries, dimension, rows, rowCount, thresholds, sink, context); break;
    default: rowDotAll<4, 2, Half>(queries, dimension, rows, rowCount, thresholds, sink, context); break;
  }
}

}  // namespace

CHRONOQL_AVX2 void scanPackedQ16Avx2(const float* packedQueries, uint32_t dimension, const float* const* rows,
                                     uint32_t rowCount, const float* thresholds, CandidateSink sink, void* context) {
  alignas(32) float scores[kPackedQueryLanes];
  for (uint32_t base = 0; base + kPackedRowGroup <= rowCount; base += kPackedRowGroup) {
    const float* r0 = rows[base + 0];
    const float* r1 = rows[base + 1];
    const float* r2 = rows[base + 2];
    const float* r3 = rows[base + 3];
    const float* r4 = rows[base + 4];
    const float* r5 = rows[base + 5];
    // 12 accumulators: 6 rows x 16 query lanes (two ymm halves). Each step
    // loads the 16 query values of one dimension once and broadcasts one
    // element of each row, i.e. 12 FMAs per 8 loads, which keeps the FMA units
    // (not the load ports) the bottleneck.
    __m256 a0l = _mm256_setzero_ps(), a0h = _mm256_setzero_ps();
    __m256 a1l = _mm256_setzero_ps(), a1h = _mm256_setzero_ps();
    __m256 a2l = _mm256_setzero_ps(), a2h = _mm256_setzero_ps();
    __m256 a3l = _mm256_setzero_ps(), a3h = _mm256_setzero_ps();
    __m256 a4l = _mm256_setzero_ps(), a4h = _mm256_setzero_ps();
    __m256 a5l = _mm256_setzero_ps(), a5h = _mm256_setzero_ps();
    const float* q = packedQueries;
#pragma GCC unroll 4
    for (uint32_t k = 0; k < dimension; ++k, q += kPackedQueryLanes) {
      const __m256 ql = _mm256_load_ps(q);
      const __m256 qh = _mm256_load_ps(q + 8);
      __m256 b = _mm256_broadcast_ss(r0 + k);
      a0l = _mm256_fmadd_ps(ql, b, a0l);
      a0h = _mm256_fmadd_ps(qh, b, a0h);
      b = _mm256_broadcast_ss(r1 + k);
      a1l = _mm256_fmadd_ps(ql, b, a1l);
      a1h = _mm256_fmadd_ps(qh, b, a1h);
      b = _mm256_broadcast_ss(r2 + k);
      a2l = _mm256_fmadd_ps(ql, b, a2l);
      a2h = _mm256_fmadd_ps(qh, b, a2h);
      b = _mm256_broadcast_ss(r3 + k);
      a3l = _mm256_fmadd_ps(ql, b, a3l);
      a3h = _mm256_fmadd_ps(qh, b, a3h);
      b = _mm256_broadcast_ss(r4 + k);
      a4l = _mm256_fmadd_ps(ql, b, a4l);
      a4h = _mm256_fmadd_ps(qh, b, a4h);
      b = _mm256_broadcast_ss(r5 + k);
      a5l = _mm256_fmadd_ps(ql, b, a5l);
      a5h = _mm256_fmadd_ps(qh, b, a5h);
    }

    __m256 tl = _mm256_loadu_ps(thresholds);
    __m256 th = _mm256_loadu_ps(thresholds + 8);
    // The threshold test is vectorised; only rows with a lane at or above its
    // query's current k-th score leave the kernel.
#define CHRONOQL_EMIT_ROW(index, lo, hi)                                                               \
  do {                                                                                                 \
    const uint32_t mask = static_cast<uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(lo, tl, _CMP_GE_OQ))) | \
                          (static_cast<uint32_t>(_mm256_movemask_ps(_mm256_cmp_ps(hi, th, _CMP_GE_OQ))) << 8); \
    if (mask != 0) {                                                                                   \
      _mm256_store_ps(scores, lo);                                                                     \
      _mm256_store_ps(scores + 8, hi);                                                                 \
      sink(context, base + (index), mask, scores);                                                     \
      tl = _mm256_loadu_ps(thresholds);                                                                \
      th = _mm256_loadu_ps(thresholds + 8);                                                            \
    }                                                                                                  \
  } while (0)
    CHRONOQL_EMIT_ROW(0, a0l, a0h);
    CHRONOQL_EMIT_ROW(1, a1l, a1h);
    CHRONOQL_EMIT_ROW(2, a2l, a2h);
    CHRONOQL_EMIT_ROW(3, a3l, a3h);
    CHRONOQL_EMIT_ROW(4, a4l, a4h);
    CHRONOQL_EMIT_ROW(5, a5l, a5h);
#undef CHRONOQL_EMIT_ROW
  }
}

CHRONOQL_AVX2 void scanRowDotAvx2(const float* queries, uint32_t queryCount, uint32_t dimension,
                                  const void* const* rows, uint32_t rowCount, bool rowsAreHalf,
                                  const float* thresholds, CandidateSink sink, void* context) {
  if (rowsAreHalf) {
    rowDotDispatch<true>(queries, queryCount, dimension, rows, rowCount, thresholds, sink, context);
  } else {
    rowDotDispatch<false>(queries, queryCount, dimension, rows, rowCount, thresholds, sink, context);
  }
}

CHRONOQL_AVX2 void halfToFloatAvx2(const uint16_t* source, float* destination, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm256_storeu_ps(destination + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i))));
  }
  if (i < count) {
    uint16_t padded[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    float out[8];
    std::memcpy(padded, source + i, (count - i) * sizeof(uint16_t));
    _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(padded))));
    std::memcpy(destination + i, out, (count - i) * sizeof(float));
  }
}

CHRONOQL_AVX2 void floatToHalfAvx2(const float* source, uint16_t* destination, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(destination + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(source + i), _MM_FROUND_TO_NEAREST_INT));
  }
  if (i < count) {
    float padded[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    uint16_t out[8];
    std::memcpy(padded, source + i, (count - i) * sizeof(float));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtps_ph(_mm256_loadu_ps(padded), _MM_FROUND_TO_NEAREST_INT));
    std::memcpy(destination + i, out, (count - i) * sizeof(uint16_t));
  }
}

CHRONOQL_AVX2 uint64_t streamReadAvx2(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
  __m256i s2 = _mm256_setzero_si256(), s3 = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    s0 = _mm256_add_epi64(s0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    s1 = _mm256_add_epi64(s1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    s2 = _mm256_add_epi64(s2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    s3 = _mm256_add_epi64(s3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i total = _mm256_add_epi64(_mm256_add_epi64(s0, s1), _mm256_add_epi64(s2, s3));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), total);
  uint64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < bytes; ++i) sum += p[i];
  return sum;
}

}  // namespace chronoql

#endif  // CHRONOQL_HAVE_AVX2_KERNELS
