// Gemm (Y = alpha * A' B' + beta * C, C broadcast to [M, N]) and MatMul (numpy
// semantics: 1-D promotion, broadcast batch dims) on matmul.comp. Operands are
// read through strides, so transposes and broadcasts cost no copies. A constant
// B is stored [K, N] (coalesced reads) when it fits one binding, else [N, K] so
// that column ranges are contiguous and the product is dispatched in column
// slices (AlexNet's and VGG's first fully connected layers exceed lavapipe's
// 128 MiB maxStorageBufferRange). A Gemm bias of one value per column becomes
// the first epilogue step, so a BatchNormalization bundled after it merges in.
//
// A gate's consumer Gemm after a Flatten (docs/GATING.md: spec.zero_block
// values per channel) reads only the blocks of A's row that are not all zero:
// gate_inputs.spv lists them per sample in the workspace, gemm_blocks.spv runs
// the product over those blocks.
#include "frugal/model/ops/matmul.h"

#include <algorithm>

#include "frugal/plugin_sdk.hpp"
#include "vk_kernel.h"

namespace frugal::vk {

namespace {

struct Operand {
  bool present = false, constant = false;
  std::vector<float> values;  // constants, in the layout the strides describe (until packed)
  size_t elems = 0;           // constants: values packed
  uint32_t off = 0;           // in the weights block
  int64_t sample_elems = 0;   // activations of a batched model: values per sample (0: bind whole)
};

class MatMulKernel : public Kernel {
 public:
  explicit MatMulKernel(const KernelSpec& s) : label_(s.label()) {
    if (dynamic_cast<const ops::Gemm*>(s.op))
      init_gemm(s);
    else
      init_matmul(s);
    for (int64_t v : {rows_, N_, K_, batch_}) u32(v, s, "a matrix size");
    const InputInfo& first = s.inputs[0];
    declared_dim0_ = first.dims.empty() ? 1 : first.dims[0];
    if (!s.batched) declared_dim0_ = 1;  // one dispatch over everything
    units_ = declared_dim0_;
    // A gate's consumer: one row of A per sample, blocks of zero_block values.
    if (gemm_ && s.zero_block > 0 && s.batched && !a_.constant && a_.sample_elems == K_ && A_SK_ == 1 &&
        b_.constant && !c_.present && K_ % s.zero_block == 0) {
      block_ = s.zero_block;
      blocks_ = K_ / block_;
    }
  }

  // A gate's consumer: per sample the list of A's blocks that are not all zero [1 + blocks].
  uint64_t workspace_bytes(int64_t n) const override { return block_ ? uint64_t(n * (1 + blocks_)) * 4 : 0; }
  bool skips_off_channels() const override { return block_ > 0; }
  int64_t skip_pairs() const override { return N_ * blocks_; }

  bool mixes_samples() const override { return mixes_; }
  Epilogue* epilogue() override { return gemm_ ? &epilogue_ : nullptr; }

  void pack(WeightPacker& p) override {
    min_groups_ = p.tiles.min_groups;
    p.begin_block();
    epilogue_.pack(p);
    epilogue_bytes_ = p.block_bytes();  // the W binding holds only these tables
    // A constant B as halves with option weight_storage fp16 (not a gate
    // consumer's: gemm_blocks.spv reads float32).
    b_f16_ = p.storage == WeightStorage::F16 && b_.constant && !block_;
    // A constant B too large for one binding is stored [N, K] and sliced by columns.
    const uint64_t slack = p.alignment_bytes();
    if (b_.constant && folded_ && b_.values.size() * b_elem_bytes() + slack > p.max_binding_bytes) {
      std::vector<float> nk(b_.values.size());
      for (int64_t k = 0; k < K_; ++k)
        for (int64_t j = 0; j < N_; ++j) nk[size_t(j * K_ + k)] = b_.values[size_t(k * B_SK_ + j * B_SN_)];
      b_.values = std::move(nk);
      B_SK_ = 1;
      B_SN_ = K_;
      b_sliced_ = true;
      cols_per_slice_ = slice_columns(p.max_binding_bytes - slack);
    }
    for (Operand* o : {&a_, &b_, &c_})
      if (o->present && o->constant) {
        o->off = o == &b_ && b_f16_ ? p.add_halves(o->values, label_) : p.add_floats(o->values);
        o->elems = o->values.size();
        o->values = std::vector<float>();  // the device holds it now
      }
  }

  uint64_t b_elem_bytes() const { return b_f16_ ? 2 : 4; }
  // Columns of an [N, K] B per binding of `room` bytes; with halves and an odd K
  // an even count, so that every slice starts on a word. Where a binding holds
  // fewer than two such columns, B stays float32.
  int64_t slice_columns(uint64_t room) {
    const bool odd_halves = b_f16_ && K_ % 2 != 0;
    if (odd_halves && room / (uint64_t(K_) * 2) < 2) b_f16_ = false;
    const int64_t cols = std::max<int64_t>(1, int64_t(room / (uint64_t(K_) * b_elem_bytes())));
    return b_f16_ && odd_halves ? cols / 2 * 2 : cols;
  }

  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    tile_ = d.matmul_tile();
    SpecConstants sc;
    sc.set(0, tile_).set(1, tile_).set(2, 1).set(3, tile_);
    sc.set(4, uint32_t(N_)).set(5, uint32_t(K_)).set(6, uint32_t(A_SR_)).set(7, uint32_t(A_SK_));
    sc.set(8, uint32_t(B_SK_)).set(9, uint32_t(B_SN_)).set(10, uint32_t(BD1_)).set(11, uint32_t(BD2_));
    for (uint32_t t = 0; t < 3; ++t) {
      sc.set(12 + t, uint32_t(a_bs_[t]));
      sc.set(15 + t, uint32_t(b_bs_[t]));
    }
    sc.set(18, c_.present ? 1 : 0).set(19, uint32_t(C_SR_)).set(20, uint32_t(C_SN_));
    sc.set_float(21, alpha_).set_float(22, beta_).set(23, b_f16_ ? 1u : 0u);
    epilogue_.specialize(sc, uint32_t(N_));
    pipeline_ = d.pipeline(shaders.path("matmul"), sc);
    wg_ = d.workgroup_1d();
    sc.set(0, wg_).set(1, 1);
    rows_pipeline_ = d.pipeline(shaders.path("matmul_rows"), sc);
    if (min_groups_ > 0 && K_ >= 2 * kSplitLanes) {
      sc.set(0, kSplitLanes);
      rows_k_pipeline_ = d.pipeline(shaders.path("matmul_rows_k"), sc);
    }
    const int64_t rows1 = folded_ ? rows_ / units_ : rows_, items1 = folded_ ? 1 : batch_ / units_;
    split_at_one_ = rows_k_pipeline_ && !block_ && rows1 <= kFewRows &&
                    (N_ + wg_ - 1) / wg_ * ((rows1 + 3) / 4) * items1 < int64_t(min_groups_);
    if (!block_) return;
    SpecConstants is;
    is.set(0, kGateGroup).set(1, 1).set(2, 1).set(3, uint32_t(block_)).set(4, uint32_t(blocks_));
    is.set(5, uint32_t(N_));
    inputs_pipeline_ = d.pipeline(shaders.path("gate_inputs"), is);
    SpecConstants bs;
    bs.set(0, d.workgroup_1d()).set(1, 1).set(2, 1).set(3, uint32_t(N_)).set(4, uint32_t(K_));
    bs.set(5, uint32_t(block_)).set(6, uint32_t(blocks_)).set(7, uint32_t(B_SK_)).set(8, uint32_t(B_SN_));
    bs.set_float(9, alpha_);
    epilogue_.specialize(bs, uint32_t(N_));
    blocks_pipeline_ = d.pipeline(shaders.path("gemm_blocks"), bs);
  }

  // matmul_rows_k splits the reduction over its work group (at one sample).
  uint32_t reduction_split() const override { return split_at_one_ ? kSplitLanes : 1; }

  void record(Recorder& r, const LayerIO& io) const override {
    const int64_t n = count(io);
    // Samples are rows (Gemm, folded MatMul) or batch items (batched MatMul).
    const int64_t rows_unit = folded_ ? rows_ / units_ : rows_, batch_unit = folded_ ? 1 : batch_ / units_;
    const uint64_t out_unit = uint64_t(rows_unit * batch_unit * N_) * 4;
    const int64_t g = samples_per_dispatch(r, io,
                                           {uint64_t(a_.sample_elems) * 4, uint64_t(b_.sample_elems) * 4,
                                            uint64_t(c_.sample_elems) * 4, out_unit},
                                           label_);
    const int64_t slice = b_sliced_ ? cols_per_slice_ : N_;
    const Region lists = block_ ? record_block_lists(r, io, g) : Region{};
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      for (int64_t j0 = 0; j0 < N_; j0 += slice) {
        const int64_t cols = std::min(slice, N_ - j0);
        Bindings b;
        b.slot[kX] = bind(a_, io, 0, s0, k);
        if (b_sliced_)
          b.slot[kY] = io.weights.sub(uint64_t(b_.off) * 4 + uint64_t(j0 * K_) * b_elem_bytes(),
                                      (uint64_t(cols * K_) * b_elem_bytes() + 3) / 4 * 4);
        else
          b.slot[kY] = bind(b_, io, 1, s0, k);
        if (c_.present) b.slot[kZ] = bind(c_, io, 2, s0, k);
        b.slot[kO] = io.out.sub(uint64_t(s0) * out_unit, uint64_t(k) * out_unit);
        b.slot[kW] = io.weights.sub(0, epilogue_bytes_);
        PushConstants pc;
        pc.n = uint32_t(k);
        pc.p0 = uint32_t(folded_ ? k * rows_unit : rows_unit);
        pc.p1 = uint32_t(folded_ ? 1 : k * batch_unit);
        pc.p2 = uint32_t(j0);
        pc.p3 = uint32_t(cols);
        if (block_) {
          b.slot[kZ] = lists.sub(uint64_t(s0 * (1 + blocks_)) * 4, uint64_t(k * (1 + blocks_)) * 4);
          r.bind(blocks_pipeline_, b, pc, label_);
          r.dispatch_flat(uint64_t(k * cols), r.device().workgroup_1d());
          continue;
        }
        if (pc.p0 <= kFewRows) {  // a TILE x TILE group would leave most rows idle
          record_few_rows(r, b, pc, cols);
          continue;
        }
        r.bind(pipeline_, b, pc, label_);
        r.dispatch(uint32_t((cols + tile_ - 1) / tile_), uint32_t((pc.p0 + tile_ - 1) / tile_), pc.p1);
      }
    }
  }

 private:
  // matmul_rows.spv, or on a GPU where that leaves the device idle (fewer
  // work groups than min_groups) matmul_rows_k.spv: a group per column.
  void record_few_rows(Recorder& r, const Bindings& b, PushConstants& pc, int64_t cols) const {
    const uint32_t gx = uint32_t((cols + wg_ - 1) / wg_), gy = (pc.p0 + 3) / 4;
    const std::string note = "reduction " + std::to_string(K_);
    if (rows_k_pipeline_ && uint64_t(gx) * gy * pc.p1 < min_groups_ &&
        uint64_t(cols) <= r.device().max_group_count(0)) {
      r.bind(rows_k_pipeline_, b, pc, label_);
      r.note(note + " over " + std::to_string(kSplitLanes) + " invocations per work group");
      r.dispatch(uint32_t(cols), gy, pc.p1);
      return;
    }
    r.bind(rows_pipeline_, b, pc, label_);
    r.note(note + " per invocation");
    r.dispatch(gx, gy, pc.p1);
  }

  // Per sample the list of A's blocks that are not all zero, in io.ws
  // (gate_inputs.spv; the (column, block) pairs that run go to io.stats).
  Region record_block_lists(Recorder& r, const LayerIO& io, int64_t g) const {
    const int64_t n = count(io);
    const Region lists = io.ws.sub(0, uint64_t(n * (1 + blocks_)) * 4);
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      b.slot[kX] = bind(a_, io, 0, s0, k);
      b.slot[kO] = lists.sub(uint64_t(s0 * (1 + blocks_)) * 4, uint64_t(k * (1 + blocks_)) * 4);
      PushConstants pc;
      pc.n = uint32_t(k);
      pc.p0 = 0;
      r.bind(inputs_pipeline_, b, pc, label_ + " (input blocks)");
      r.dispatch_flat(uint64_t(k * blocks_) * kGateGroup, kGateGroup);
    }
    r.barrier();
    Bindings b;
    b.slot[kO] = lists;
    b.slot[kU] = io.stats;
    PushConstants pc;
    pc.n = uint32_t(n);
    pc.p0 = 1;
    pc.p2 = io.stats.empty() ? 0u : 1u;
    r.bind(inputs_pipeline_, b, pc, label_ + " (input block lists)");
    r.dispatch_flat(uint64_t(n) * kGateGroup, kGateGroup);
    r.barrier();
    return lists;
  }

  Region bind(const Operand& o, const LayerIO& io, size_t input, int64_t s0, int64_t k) const {
    if (o.constant) {
      const uint64_t bytes = &o == &b_ && b_f16_ ? (o.elems + 1) / 2 * 4 : uint64_t(o.elems) * 4;
      return io.weights.sub(uint64_t(o.off) * 4, bytes);
    }
    if (!io.batched || o.sample_elems == 0) return io.in[input];
    return io.in[input].sub(uint64_t(s0 * o.sample_elems) * 4, uint64_t(k * o.sample_elems) * 4);
  }

  Operand operand(const KernelSpec& s, size_t i, const char* role) {
    Operand o;
    const InputInfo& in = required_input(s, i, role);
    o.present = true;
    if (in.constant) {
      o.constant = true;
      o.values = constant_floats(s, i, role);
    } else {
      require_activation(s, i, role);
      if (s.batched && !in.dims.empty()) o.sample_elems = product(in.dims, 1);
    }
    return o;
  }

  void init_gemm(const KernelSpec& s) {
    gemm_ = true;
    const ops::Gemm& op = s.op_as<ops::Gemm>();
    a_ = operand(s, 0, "input A");
    b_ = operand(s, 1, "input B");
    const bool ta = op.trans_a, tb = op.trans_b;
    alpha_ = op.alpha;
    beta_ = op.beta;
    const Dims& ad = s.inputs[0].dims;  // the op's shape function checked A, B and C
    const int64_t M = s.output[0];
    K_ = ta ? ad[0] : ad[1];
    N_ = s.output[1];
    rows_ = M;
    A_SR_ = ta ? 1 : K_;
    A_SK_ = ta ? M : 1;
    B_SK_ = tb ? 1 : N_;
    B_SN_ = tb ? K_ : 1;
    if (b_.constant && tb) {  // store it [K, N]: neighbouring invocations read neighbouring values
      std::vector<float> kn(b_.values.size());
      for (int64_t k = 0; k < K_; ++k)
        for (int64_t j = 0; j < N_; ++j) kn[size_t(k * N_ + j)] = b_.values[size_t(j * K_ + k)];
      b_.values = std::move(kn);
      B_SK_ = N_;
      B_SN_ = 1;
    }
    mixes_ = (!a_.constant && ta) || !b_.constant;  // the batch would sit on the K axis
    if (has_input(s, 2)) {
      c_ = operand(s, 2, "input C");
      const Dims& cd = s.inputs[2].dims;
      const int64_t cr = cd.size() == 2 ? cd[0] : 1, cc = cd.empty() ? 1 : cd.back();
      if (c_.constant && product(cd) == N_ && !cd.empty() && cd.back() == N_) {
        // One value per column: the first epilogue step.
        std::vector<float> shift(static_cast<size_t>(N_));
        for (int64_t j = 0; j < N_; ++j) shift[size_t(j)] = beta_ * c_.values[size_t(j)];
        epilogue_.add_affine(std::vector<float>(size_t(N_), 1.0f), shift);
        c_ = Operand();
      } else {
        C_SR_ = cr == 1 ? 0 : cc;
        C_SN_ = cc == 1 ? 0 : 1;
        if (!c_.constant) {
          if (cd.size() < 2)
            mixes_ = true;  // an activation broadcast over the rows (samples)
          else if (s.batched)
            C_SR_ = cc;  // its dim 0 is the batch, even when declared 1
        }
      }
    }
  }

  void init_matmul(const KernelSpec& s) {
    a_ = operand(s, 0, "input A");
    b_ = operand(s, 1, "input B");
    const Dims &a_in = s.inputs[0].dims, &b_in = s.inputs[1].dims;
    ValueShape va, vb;
    va.dims = a_in;
    vb.dims = b_in;
    const ops::MatMulShape shape = ops::MatMulShape::of(va, vb);  // checked by the op's shape function
    const int64_t M = shape.M;
    K_ = shape.K;
    N_ = shape.N;
    const Dims &batch = shape.batch, &ab = shape.a_batch, &bb = shape.b_batch;
    const size_t r = batch.size();
    A_SR_ = K_;
    A_SK_ = 1;
    B_SK_ = N_;
    B_SN_ = 1;
    mixes_ = (!b_.constant && b_in.size() <= 2) || (!a_.constant && a_in.size() == 1);
    // In a batched model an activation's dim 0 is the batch, even when declared 1.
    const bool a_batch0 = s.batched && !a_.constant && a_in.size() == 2 + r && r > 0;
    const bool b_batch0 = s.batched && !b_.constant && b_in.size() == 2 + r && r > 0;
    if (product(bb) == 1 && ab == batch && !b_batch0) {  // B is one matrix: A's batch dims fold into the rows
      rows_ = product(batch) * M;
      batch_ = 1;
    } else {
      if (r > 3) unsupported(s, "MatMul with " + std::to_string(r) + " broadcast batch dims (at most 3)");
      rows_ = M;
      batch_ = product(batch);
      folded_ = false;  // (no column slicing of a batched B)
      // Batch dim 0 (the samples, in a batched model) is the shader's dynamic
      // slot b0; the others go right-aligned into the static slots 1 and 2.
      auto slot = [&](size_t k) { return k == 0 ? size_t(0) : 3 - (r - 1) + (k - 1); };
      Dims q(3, 1);
      for (size_t k = 0; k < r; ++k) q[slot(k)] = batch[k];
      BD1_ = q[1];
      BD2_ = q[2];
      int64_t sa = M * K_, sb = K_ * N_;
      for (size_t k = r; k-- > 0;) {
        a_bs_[slot(k)] = ab[k] == 1 && !(k == 0 && a_batch0) ? 0 : sa;
        b_bs_[slot(k)] = bb[k] == 1 && !(k == 0 && b_batch0) ? 0 : sb;
        sa *= ab[k];
        sb *= bb[k];
      }
      // A batched model splits by samples: every activation must carry them on axis 0.
      if ((!a_.constant && a_in.size() != 2 + r) || (!b_.constant && b_in.size() != 2 + r)) mixes_ = true;
    }
  }

  std::string label_;
  bool gemm_ = false, mixes_ = false;
  bool b_sliced_ = false;  // a constant B stored [N, K] and dispatched in column slices
  bool b_f16_ = false;     // a constant B stored as halves (B_F16 in matmul.comp)
  bool folded_ = true;     // batch dims folded into the rows (Gemm too); else a batch index per item
  Operand a_, b_, c_;
  int64_t rows_ = 1, N_ = 1, K_ = 1, batch_ = 1, units_ = 1;
  int64_t A_SR_ = 1, A_SK_ = 1, B_SK_ = 1, B_SN_ = 1, C_SR_ = 0, C_SN_ = 0, BD1_ = 1, BD2_ = 1;
  int64_t a_bs_[3] = {0, 0, 0}, b_bs_[3] = {0, 0, 0};
  int64_t cols_per_slice_ = 1;
  uint64_t epilogue_bytes_ = 0;
  float alpha_ = 1.0f, beta_ = 1.0f;
  Epilogue epilogue_;
  // Products of at most this many rows run on matmul_rows.spv (one column and
  // 4 rows per invocation), larger ones on the TILE x TILE tiles.
  static constexpr uint32_t kFewRows = 8;
  static constexpr uint32_t kSplitLanes = 64;  // invocations of matmul_rows_k (KT in matmul.comp)
  uint32_t tile_ = 16, wg_ = 64;
  uint32_t min_groups_ = 0;    // TileLimits::min_groups
  bool split_at_one_ = false;  // one sample's product runs on matmul_rows_k
  VkPipeline pipeline_ = VK_NULL_HANDLE, rows_pipeline_ = VK_NULL_HANDLE, rows_k_pipeline_ = VK_NULL_HANDLE;
  int64_t block_ = 0, blocks_ = 0;  // a gate's consumer: values per block of A's row, blocks per row
  VkPipeline inputs_pipeline_ = VK_NULL_HANDLE, blocks_pipeline_ = VK_NULL_HANDLE;
};

}  // namespace

FRUGAL_VULKAN_KERNEL(Gemm, MatMulKernel);
FRUGAL_VULKAN_KERNEL(MatMul, MatMulKernel);

}  // namespace frugal::vk
