// IEEE binary16 ("half") on the host, for weights stored as fp16 (option
// "weight_storage": "fp16"): the shaders read them with unpackHalf2x16, core
// GLSL, so no 16-bit storage feature is needed and every device can run them.
#pragma once

#include <cstdint>
#include <vector>

namespace frugal::vk {

// The largest finite half: values beyond it have no fp16 form.
constexpr float kHalfMax = 65504.0f;

// The half nearest to v (ties to even, as the GPU's own conversions), with
// subnormals; NaN stays NaN and values beyond kHalfMax become infinities.
uint16_t half_bits(float v);
// The float a half holds (exact).
float half_value(uint16_t h);
// v as halves, two per word in packHalf2x16's order (v[2i] in the low 16
// bits); an odd count ends with a half zero.
std::vector<uint32_t> pack_halves(const std::vector<float>& v);

}  // namespace frugal::vk
