#include "simd.h"

#include <cstdlib>
#include <cstring>

#include "half.h"

namespace chronoql {

bool cpuSupportsAvx2Fma() {
#if defined(CHRONOQL_HAVE_AVX2_KERNELS) && (defined(__GNUC__) || defined(__clang__))
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  }();
  return supported;
#else
  return false;
#endif
}

CpuKernel activeCpuKernel() {
  // Read on every call (cheap) so tests can switch kernels between searches.
  const char* forced = std::getenv("CHRONOQL_CPU_KERNEL");
  if (forced != nullptr && std::strcmp(forced, "scalar") == 0) return CpuKernel::Scalar;
  return cpuSupportsAvx2Fma() ? CpuKernel::Avx2 : CpuKernel::Scalar;
}

const char* cpuKernelName(CpuKernel kernel) { return kernel == CpuKernel::Avx2 ? "avx2-fma" : "scalar"; }

void floatToHalf(const float* source, uint16_t* destination, size_t count) {
#if defined(CHRONOQL_HAVE_AVX2_KERNELS)
  if (cpuSupportsAvx2Fma()) return floatToHalfAvx2(source, destination, count);
#endif
  for (size_t i = 0; i < count; ++i) destination[i] = floatToHalfBits(source[i]);
}

}  // namespace chronoql
