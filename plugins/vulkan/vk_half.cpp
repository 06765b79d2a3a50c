#include "vk_half.h"

#include <cstring>

namespace frugal::vk {

uint16_t half_bits(float v) {
  uint32_t f;
  std::memcpy(&f, &v, 4);
  const uint16_t sign = uint16_t((f >> 16) & 0x8000u);
  const uint32_t abs = f & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00u);  // NaN (quiet)
  if (abs >= 0x47800000u) {                                // 65536 and beyond: rounds past the largest half
    return uint16_t(sign | 0x7c00u);
  }
  const int exp = int(abs >> 23) - 127;
  uint32_t mant = (abs & 0x7fffffu) | 0x800000u;  // 24 bits with the implicit one
  int shift;                                      // bits of mant dropped
  uint32_t base;                                  // the half's exponent field
  if (exp >= -14) {                               // normal half: 10 fraction bits kept
    shift = 13;
    base = uint32_t(exp + 15) << 10;
    mant &= 0x7fffffu;  // the implicit one lives in the exponent field
  } else {              // subnormal half (or zero): units of 2^-24
    shift = -exp - 1;   // mant * 2^(exp - 23) / 2^-24 = mant >> (-exp - 1)
    if (shift > 24) return sign;
    base = 0;
  }
  const uint32_t kept = mant >> shift, rest = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
  uint32_t h = base + kept;  // a carry out of the fraction moves into the exponent, as it should
  if (rest > half || (rest == half && (kept & 1u))) ++h;
  return uint16_t(sign | h);
}

float half_value(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t f;
  if (e == 0x1fu) {
    f = sign | 0x7f800000u | (m << 13);
  } else if (e != 0) {
    f = sign | ((e + 112u) << 23) | (m << 13);
  } else {  // subnormal: m * 2^-24, exact in float
    const float v = float(m) * (1.0f / 16777216.0f);
    std::memcpy(&f, &v, 4);
    f |= sign;
  }
  float v;
  std::memcpy(&v, &f, 4);
  return v;
}

std::vector<uint32_t> pack_halves(const std::vector<float>& v) {
  std::vector<uint32_t> w((v.size() + 1) / 2, 0);
  for (size_t i = 0; i < v.size(); ++i) w[i / 2] |= uint32_t(half_bits(v[i])) << (16 * (i % 2));
  return w;
}

}  // namespace frugal::vk
