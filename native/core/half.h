// IEEE 754 binary16 conversion in portable C++ (round to nearest, ties to even),
// bit-identical to F16C's _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT) and to
// CUDA's __float2half_rn. Used for fp16 storage on CPUs without F16C and as the
// oracle for the vectorised path.
#pragma once

#include <cstdint>
#include <cstring>

namespace chronoql {

inline uint16_t floatToHalfBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;

  if (exponent == 0xffu) {  // Inf or NaN (NaN keeps a quiet payload bit)
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u | (mantissa >> 13) : 0u));
  }
  const int32_t halfExponent = static_cast<int32_t>(exponent) - 127 + 15;
  if (halfExponent >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> Inf
  if (halfExponent <= 0) {
    // Subnormal half (or zero): shift the implicit-1 mantissa into place and
    // round to nearest even on the bits shifted out.
    if (halfExponent < -10) return static_cast<uint16_t>(sign);
    mantissa |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - halfExponent);
    uint32_t halfMantissa = mantissa >> shift;
    const uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (remainder > halfway || (remainder == halfway && (halfMantissa & 1u))) ++halfMantissa;
    return static_cast<uint16_t>(sign | halfMantissa);
  }
  uint32_t half = sign | (static_cast<uint32_t>(halfExponent) << 10) | (mantissa >> 13);
  const uint32_t remainder = mantissa & 0x1fffu;
  // A carry out of the mantissa correctly bumps the exponent (and may give Inf).
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(half);
}

inline float halfBitsToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1fu) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // normalise the subnormal
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
    }
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

}  // namespace chronoql
