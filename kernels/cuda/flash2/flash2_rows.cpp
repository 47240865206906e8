// Registry rows of the tensor-core flash2 family on CUDA: flash2, sparse,
// flash2_gqa_packed and flash2_splitkv. All four run flash2_fwd_kernel
// (flash2_kernel.cuh) with different runtime settings (flash2_params.hpp);
// the split-KV row adds the merge kernel. Host C++ (fmt is fine here; the .cu
// files must not include it).
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "harness/models.hpp"
#include "harness/registry.hpp"
#include "kernels/cuda/common/device_runner.cuh"
#include "kernels/cuda/flash2/flash2_api.hpp"
#include "kernels/cuda/flash2/flash2_params.hpp"

namespace attnbench {

namespace cuda {

namespace {

int device_attribute(cudaDeviceAttr a, int fallback) {
  int n = 0, dev = 0, v = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0 || cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
    cudaGetLastError();  // clear the error a machine without a GPU leaves
    return fallback;
  }
  return v;
}

// Opt-in shared memory per block of the device, or -1 without a device.
int device_smem_optin() {
  static const int v = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, -1);
  return v;
}

}  // namespace

int flash2_sm_count() {
  static const int v = device_attribute(cudaDevAttrMultiProcessorCount, 132);
  return v;
}

problem decode_geometry(const problem& p) {
  problem q = p;
  q.Br = kDecodeBr;
  q.Bc = kDecodeBc;
  return q;
}

std::int64_t splitkv_max_tiles(const problem& p) {
  const problem q = decode_geometry(p);
  const int pack = static_cast<int>(p.group());
  const std::int64_t rows = packed_rows(q, pack);
  std::int64_t most = 0;
  for (std::int64_t r0 = 0; r0 < rows; r0 += q.Br) {
    const span64 qr = packed_query_range(r0, std::min(rows, r0 + q.Br), pack);
    most = std::max(most, kv_tiles_for_queries(q, qr.lo, qr.hi, true).count());
  }
  return most;
}

int splitkv_num_splits(const problem& p, int sms) {
  const problem q = decode_geometry(p);
  const std::int64_t ctas = p.B * p.Hkv * row_tiles(q, static_cast<int>(p.group()), q.Br);
  // About 4 CTAs per SM: 3 fit at once (168 registers x 128 threads, 69 KB of
  // shared memory) and the 4th evens out the tail. Each split keeps at least
  // 4 key tiles (256 keys), so its partial O (d fp32 per row, written and
  // read once) stays below 1/16 of the K/V bytes it reads at Nq = 1.
  const std::int64_t want = ceil_div(4LL * sms, ctas);
  const std::int64_t cap = std::max<std::int64_t>(1, splitkv_max_tiles(p) / 4);
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, cap), 1, kMaxSplits));
}

namespace {

// Tiles of the sweep that the main kernel has for head dim d.
std::string tile_list(int d, dtype t) {
  int n = 0;
  const flash2_config* c = flash2_configs(&n);
  std::string s;
  for (int i = 0; i < n; ++i)
    if (!c[i].decode && c[i].d == d && c[i].type == t)
      s += fmt::format("{}{}x{}", s.empty() ? "" : ", ", c[i].bm, c[i].bn);
  return s;
}

support check_common(const problem& p) {
  if (p.type == dtype::fp32) return support::no("tensor-core kernel needs fp16 or bf16");
  if (p.d != 64 && p.d != 128)
    return support::no(fmt::format("flash2 cuda is instantiated for head dims 64 and 128, not d={}", p.d));
  return support::yes();
}

support check_smem(const flash2_config& c) {
  const int limit = device_smem_optin();
  if (limit > 0 && c.smem > limit)
    return support::no(fmt::format("tile {}x{} at d={} needs {} KB of shared memory, the device allows {} KB",
                                   c.bm, c.bn, c.d, c.smem / 1024, limit / 1024));
  return support::yes();
}

// pack: query heads per CTA (1, or the GQA group for flash2_gqa_packed); the
// grid's y extent is B * H / pack.
support check_main_tile(const problem& p, std::int64_t pack = 1) {
  if (auto s = check_common(p); !s.ok) return s;
  const flash2_config* c = find_flash2_config(static_cast<int>(p.d), p.type, p.Br, p.Bc);
  if (!c)
    return support::no(fmt::format("no Br x Bc = {}x{} instantiation for d={} (have {})", p.Br, p.Bc,
                                   p.d, tile_list(static_cast<int>(p.d), p.type)));
  if (auto s = check_smem(*c); !s.ok) return s;
  if (p.B * (p.H / pack) > 65535)
    return support::no(pack == 1 ? fmt::format("B*H={} exceeds the grid's y limit 65535", p.B * p.H)
                                 : fmt::format("B*H/group={} exceeds the grid's y limit 65535",
                                               p.B * (p.H / pack)));
  return support::yes();
}

}  // namespace

flash2_settings settings_for(flash2_row row, const problem& p, int sms) {
  flash2_settings s;
  s.pack = (row == flash2_row::packed || row == flash2_row::splitkv) ? static_cast<int>(p.group()) : 1;
  s.sparse = row == flash2_row::sparse || row == flash2_row::splitkv;
  s.geometry = row == flash2_row::splitkv ? decode_geometry(p) : p;
  s.splits = row == flash2_row::splitkv ? splitkv_num_splits(p, sms) : 1;
  return s;
}

// ---- models ----------------------------------------------------------------
// Exact per row tile, as the kernel runs: real rows R of the tile, real keys
// of the visited key tiles, per split for flash2_splitkv.
namespace {

struct tile_walk {
  double flops_exec = 0, bytes = 0;
};

tile_walk walk(flash2_row row, const problem& p) {
  const flash2_settings st = settings_for(row, p, flash2_sm_count());
  const problem& q = st.geometry;
  const double e = dtype_bytes(p.type);
  const std::int64_t rows = packed_rows(q, st.pack);
  tile_walk w;
  for (std::int64_t r0 = 0; r0 < rows; r0 += q.Br) {
    const std::int64_t R = std::min(q.Br, rows - r0);
    const span64 qr = packed_query_range(r0, r0 + R, st.pack);
    const tile_spans sp = kv_tiles_for_queries(q, qr.lo, qr.hi, st.sparse);
    const std::int64_t nf = sp.first.size();
    for (int s = 0; s < st.splits; ++s) {
      const span64 ord = split_ordinals(sp.count(), st.splits, s);
      std::int64_t keys = 0;
      for (std::int64_t o = ord.lo; o < ord.hi; ++o)
        keys += kv_tile_cols(q, o < nf ? sp.first.lo + o : sp.second.lo + (o - nf));
      w.flops_exec += 4.0 * p.d * static_cast<double>(R * keys);
      w.bytes += 2.0 * p.d * e * keys;                // K and V tiles
      if (!ord.empty()) w.bytes += R * p.d * e;       // Q (an empty split skips it)
      w.bytes += st.splits == 1 ? R * (p.d * e + 4)   // O and lse, once
                                : R * (p.d + 1) * 4.0;  // fp32 partial O and lse
    }
    if (st.splits > 1)  // merge: read every partial, write O and lse
      w.bytes += R * (st.splits * (p.d + 1) * 4.0 + p.d * e + 4);
  }
  const double ctas = static_cast<double>(p.B * (p.H / st.pack));
  w.flops_exec *= ctas;
  w.bytes *= ctas;
  return w;
}

std::int64_t workspace_bytes(const problem& p) {
  const int splits = splitkv_num_splits(p, flash2_sm_count());
  return splits > 1 ? static_cast<std::int64_t>(splits) * p.rows() * (p.d + 1) * 4 : 0;
}

}  // namespace

double model_flops_executed_packed(const problem& p) { return walk(flash2_row::packed, p).flops_exec; }
double model_bytes_packed(const problem& p) { return walk(flash2_row::packed, p).bytes; }
double model_flops_executed_splitkv(const problem& p) { return walk(flash2_row::splitkv, p).flops_exec; }
double model_bytes_splitkv(const problem& p) { return walk(flash2_row::splitkv, p).bytes; }
double model_bytes_flash2_cuda(const problem& p) { return walk(flash2_row::flash2, p).bytes; }
double model_flops_executed_sparse_cuda(const problem& p) { return walk(flash2_row::sparse, p).flops_exec; }
double model_bytes_sparse_cuda(const problem& p) { return walk(flash2_row::sparse, p).bytes; }

// ---- runner ----------------------------------------------------------------
namespace {

class flash2_runner final : public device_runner {
 public:
  flash2_runner(const problem& p, flash2_row row, int forced_splits) : device_runner(p, true) {
    // SM count read here, at construction, as the split choice needs it.
    int dev = 0, sms = 0;
    ATTN_CUDA_CHECK(cudaGetDevice(&dev));
    ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const flash2_settings st = settings_for(row, p, sms);
    cfg_ = row == flash2_row::splitkv
               ? find_flash2_decode_config(static_cast<int>(p.d), p.type)
               : find_flash2_config(static_cast<int>(p.d), p.type, p.Br, p.Bc);
    if (!cfg_)
      throw backend_error(fmt::format("flash2: no kernel instantiation for {}", benchmark_name("flash2", "cuda", p)));
    int optin = 0;
    ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (cfg_->smem > optin)
      throw backend_error(fmt::format("{} needs {} bytes of shared memory, the device allows {}", cfg_->name,
                                      cfg_->smem, optin));
    prm_.p = st.geometry;
    prm_.pack = st.pack;
    prm_.sparse = st.sparse;
    prm_.splits = forced_splits > 0 ? forced_splits : st.splits;
    prm_.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)));
    prm_.scale_log2 = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)) * M_LOG2E);
    if (prm_.splits > 1) {
      o_part_ = device_buffer(static_cast<std::size_t>(prm_.splits) * p.rows() * p.d * 4);
      lse_part_ = device_buffer(static_cast<std::size_t>(prm_.splits) * p.rows() * 4);
    }
  }

  void run() override {
    prm_.q = q_.get();
    prm_.k = k_.get();
    prm_.v = v_.get();
    prm_.o = o_.get();
    prm_.lse = lse_.get<float>();
    prm_.o_part = o_part_.get<float>();
    prm_.lse_part = lse_part_.get<float>();
    cfg_->launch(prm_, stream());
    if (prm_.splits > 1) launch_splitkv_merge(prm_, stream());
  }

 private:
  const flash2_config* cfg_ = nullptr;
  flash2_params prm_;
  device_buffer o_part_, lse_part_;
};

}  // namespace

std::unique_ptr<runner> make_flash2_runner(const problem& p, flash2_row row, int forced_splits) {
  return std::make_unique<flash2_runner>(p, row, forced_splits);
}

}  // namespace cuda

void add_cuda_rows_flash2(std::vector<variant>& rows) {
  using cuda::flash2_row;
  auto row = [](std::string name, std::string summary, flash2_row kind,
                std::function<support(const problem&)> supports,
                std::function<double(const problem&)> flops_exec,
                std::function<double(const problem&)> bytes,
                std::function<std::int64_t(const problem&)> memory) {
    variant v;
    v.name = std::move(name);
    v.backend = backend_kind::cuda;
    v.math = attention_math::softmax;
    v.summary = std::move(summary);
    v.writes_lse = true;
    v.supports = std::move(supports);
    v.flops = model_flops_softmax;
    v.flops_executed = std::move(flops_exec);
    v.bytes = std::move(bytes);
    v.memory_bytes = std::move(memory);
    v.make_runner = [kind](const problem& p) { return cuda::make_flash2_runner(p, kind, 0); };
    return v;
  };
  auto base_memory = [](const problem& p) { return cuda::device_runner::base_memory_bytes(p); };

  rows.push_back(row("flash2",
                     "FlashAttention-2 on tensor cores (mma.sync, ldmatrix, cp.async double buffer), "
                     "causal tile bound, one write of O and lse",
                     flash2_row::flash2, [](const problem& p) { return cuda::check_main_tile(p); },
                     model_flops_executed_flash2, cuda::model_bytes_flash2_cuda, base_memory));

  rows.push_back(row("sparse",
                     "flash2 kernel visiting only key tiles under the local window or global tokens",
                     flash2_row::sparse,
                     [](const problem& p) {
                       if (p.mask.kind != mask_kind::local && p.mask.global == 0)
                         return support::no(fmt::format(
                             "mask {} has no local/global sparsity; flash2 covers it", to_string(p.mask)));
                       return cuda::check_main_tile(p);
                     },
                     cuda::model_flops_executed_sparse_cuda, cuda::model_bytes_sparse_cuda, base_memory));

  rows.push_back(row("flash2_gqa_packed",
                     "flash2 with all query heads of a KV group packed into one CTA's rows: K/V "
                     "loaded once per group and row tile",
                     flash2_row::packed,
                     [](const problem& p) {
                       if (p.Hkv == p.H)
                         return support::no("Hkv = H: no query heads to pack; flash2 covers it");
                       return cuda::check_main_tile(p, p.group());
                     },
                     cuda::model_flops_executed_packed, cuda::model_bytes_packed, base_memory));

  rows.push_back(row("flash2_splitkv",
                     "decode (Nq <= 16): KV range split over CTAs (splits from SM count), GQA heads "
                     "packed, partial O/lse merged by a second kernel; fixed 16x64 tiles, Br/Bc unused",
                     flash2_row::splitkv,
                     [](const problem& p) {
                       if (p.Nq > 16)
                         return support::no(fmt::format("split-KV decode handles Nq <= 16, got Nq={}", p.Nq));
                       if (auto s = cuda::check_common(p); !s.ok) return s;
                       if (p.B * p.Hkv > 65535)
                         return support::no(fmt::format("B*Hkv={} exceeds the grid's y limit", p.B * p.Hkv));
                       return cuda::check_smem(*cuda::find_flash2_decode_config(static_cast<int>(p.d), p.type));
                     },
                     cuda::model_flops_executed_splitkv, cuda::model_bytes_splitkv,
                     [](const problem& p) {
                       return cuda::device_runner::base_memory_bytes(p) + cuda::workspace_bytes(p);
                     }));
}

}  // namespace attnbench
