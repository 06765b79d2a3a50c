// What the Vulkan kernels share: the weight packer, the epilogue, the 1-D
// kernel base, the helpers of the factories and the kernel registry.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "frugal/error.h"
#include "frugal/plugin_sdk.hpp"
#include "vk_half.h"
#include "vk_kernel.h"

namespace frugal::vk {

// ---- WeightPacker ----------------------------------------------------------------

void WeightPacker::begin_block() {
  while (words_.size() % align_words_) words_.push_back(0);
  block_start_ = words_.size();
}

uint32_t WeightPacker::add_floats(const std::vector<float>& v) {
  const uint32_t at = uint32_t(words_.size() - block_start_);
  const size_t old = words_.size();
  words_.resize(old + v.size());
  if (!v.empty()) std::memcpy(words_.data() + old, v.data(), v.size() * 4);
  return at;
}

uint32_t WeightPacker::add_words(const std::vector<uint32_t>& v) {
  const uint32_t at = uint32_t(words_.size() - block_start_);
  words_.insert(words_.end(), v.begin(), v.end());
  return at;
}

uint32_t WeightPacker::add_halves(const std::vector<float>& v, const std::string& owner) {
  for (float x : v)
    if (std::fabs(x) > kHalfMax)  // (NaN passes: it stays NaN, as it would in float32)
      throw Error(
          owner + ": a weight of " + std::to_string(x) +
          " is beyond fp16's range (+-65504); create the executor with {\"weight_storage\": \"fp32\"}");
  return add_words(pack_halves(v));
}

// ---- Epilogue --------------------------------------------------------------------

bool Epilogue::has_room(bool affine) const {
  if (affine && !steps_.empty() && steps_.back().kind == kAffine) return true;
  return steps_.size() < kMaxSteps;
}

void Epilogue::pack(WeightPacker& p) {
  offsets_.assign(steps_.size(), 0);
  for (size_t k = 0; k < steps_.size(); ++k) {
    if (steps_[k].kind != kAffine) continue;
    offsets_[k] = p.add_floats(steps_[k].scale);
    p.add_floats(steps_[k].shift);
  }
}

void Epilogue::specialize(SpecConstants& sc, uint32_t channels) const {
  sc.set(40, channels);
  for (size_t k = 0; k < kMaxSteps; ++k) {
    const uint32_t i = uint32_t(k);
    if (k >= steps_.size()) {
      sc.set(41 + i, 0);
      continue;
    }
    const Step& s = steps_[k];
    if (s.kind == kAffine && s.scale.size() != channels)
      throw Error("internal: epilogue of " + std::to_string(s.scale.size()) + " channels on an output of " +
                  std::to_string(channels));
    sc.set(41 + i, uint32_t(s.kind));
    sc.set(45 + i, k < offsets_.size() ? offsets_[k] : 0);
    sc.set_float(49 + i, s.a);
    sc.set_float(53 + i, s.b);
  }
}

// ---- helpers -----------------------------------------------------------------------

void require_activation(const KernelSpec& s, size_t i, const char* role) {
  exec::require_float_activation(s, i, role);
  const InputInfo& in = s.inputs[i];
  if (in.constant)
    unsupported(
        s, std::string(role) + " '" + in.name + "' is a constant; the vulkan executor expects an activation");
}

Dims at_call(const Dims& d, const LayerIO& io) {
  Dims r = d;
  if (io.batched && !r.empty()) r[0] = io.n;
  return r;
}

uint32_t u32(int64_t v, const KernelSpec& s, const char* what) {
  if (v < 0 || v > int64_t(std::numeric_limits<uint32_t>::max()))
    unsupported(s,
                std::string(what) + " = " + std::to_string(v) + " does not fit the shaders' 32-bit indices");
  return uint32_t(v);
}

int64_t Kernel::samples_per_dispatch(const Recorder& r, const LayerIO& io,
                                     const std::vector<uint64_t>& sample_bytes,
                                     const std::string& label) const {
  const int64_t n = count(io);
  if (!io.batched) return std::max<int64_t>(1, n);
  const uint64_t limit = r.max_binding_bytes(), slack = r.device().binding_alignment();
  int64_t g = n;
  for (uint64_t b : sample_bytes) {
    if (b == 0) continue;
    if (b + slack > limit)
      throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED,
                         label + ": one sample's operand of " + std::to_string(b) +
                             " bytes does not fit one storage-buffer binding of this device (" +
                             std::to_string(limit) + " bytes)");
    g = std::min<int64_t>(g, int64_t((limit - slack) / b));
  }
  return std::max<int64_t>(1, g);
}

// ---- FlatKernel ----------------------------------------------------------------------

void FlatKernel::create_flat(Device& d, const ShaderSet& shaders, const char* shader, SpecConstants sc) {
  sc.set(0, wg_).set(1, 1).set(2, 1);
  pipeline_ = d.pipeline(shaders.path(shader), sc);
}

void FlatKernel::record_flat(Recorder& r, const LayerIO& io, uint64_t in_sample, uint64_t out_sample,
                             uint64_t invocations_per_sample, const std::string& label,
                             uint32_t rows_per_sample) const {
  const int64_t n = count(io);
  const int64_t g = samples_per_dispatch(r, io, {in_sample, out_sample}, label);
  for (int64_t s0 = 0; s0 < n; s0 += g) {
    const int64_t k = std::min(g, n - s0);
    Bindings b;
    b.slot[kX] = io.in[0].sub(uint64_t(s0) * in_sample, uint64_t(k) * in_sample);
    b.slot[kO] = io.out.sub(uint64_t(s0) * out_sample, uint64_t(k) * out_sample);
    b.slot[kW] = io.weights;
    PushConstants pc;
    pc.n = uint32_t(k);
    pc.p0 = uint32_t(k) * rows_per_sample;
    r.bind(pipeline_, b, pc, label);
    r.dispatch_flat(uint64_t(k) * invocations_per_sample, wg_);
  }
}

// ---- the kernel registry (filled by FRUGAL_VULKAN_KERNEL in the kernel files) ----

exec::KernelRegistry<Kernel>& kernels() {
  static exec::KernelRegistry<Kernel> registry;
  return registry;
}

}  // namespace frugal::vk
