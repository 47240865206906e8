#include "kernels/cuda/flash3/flash3_plan.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/cuda/launch_limits.hpp"
#include "core/errors.hpp"
#include "kernels/models/models.hpp"

namespace attnbench::cuda {

std::int64_t flash3_key_tile(const problem& p) {
  const flash3_config* c = find_flash3_config(static_cast<int>(p.d), p.type);
  return c ? c->bn : kFlash3Bc;
}

flash3_plan plan_flash3(const problem& p) {
  flash3_plan s;
  const std::int64_t g = p.group();
  s.pack = g > 1 && g <= kFlash3MaxPack ? static_cast<int>(g) : 1;
  s.queries_per_tile = static_cast<int>(kFlash3Br / s.pack);
  s.walk = tile_walk::visible;
  s.geometry = p;
  s.geometry.Br = static_cast<std::int64_t>(s.pack) * s.queries_per_tile;
  s.geometry.Bc = flash3_key_tile(p);
  return s;
}

problem flash3_resolve(const problem& p) {
  problem q = p;
  q.Br = kFlash3Br;
  q.Bc = flash3_key_tile(p);
  return q;
}

model_figures model_flash3_row(const problem& p) {
  const flash3_plan s = plan_flash3(p);
  return model_flash3_cuda(p, s.geometry, s.pack, s.walk);
}

std::string flash3_unsupported_reason(const problem& p) {
#if !defined(ATTN_EMULATE) && !defined(ATTNBENCH_FLASH3_SM90A)
  (void)p;
  return fmt::format("flash3 needs sm_90a code; this build's CUDA architectures are {} (add 90)", ATTNBENCH_CUDA_ARCHS);
#else
  const device_limits& l = current_device_limits();
  if (l.from_device && !(l.cc_major == 9 && l.cc_minor == 0))
    return fmt::format("flash3 needs an sm_90 device (Hopper: wgmma, TMA, setmaxnreg); this one is sm_{}{}", l.cc_major,
                       l.cc_minor);
  // TMA global strides must stay below 2^40 bytes (e4m3: 1 byte per element).
  const std::int64_t e = dtype_bytes(p.type);
  const std::int64_t q_batch_stride = p.H * p.Nq * p.d * e, kv_batch_stride = p.Hkv * p.Nkv * p.d * e;
  if (q_batch_stride >= (std::int64_t{1} << 40) || kv_batch_stride >= (std::int64_t{1} << 40))
    return fmt::format("flash3: a batch of Q or K/V spans {} bytes, over the 2^40 a TMA stride allows",
                       std::max(q_batch_stride, kv_batch_stride));
  return {};
#endif
}

namespace {

using encode_tiled_fn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                     const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                     CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

encode_tiled_fn encoder() {
  static const encode_tiled_fn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult status{};
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &status);
    if (err != cudaSuccess || status != cudaDriverEntryPointSuccess || !f) {
      cudaGetLastError();
      throw backend_error(fmt::format("flash3: cuTensorMapEncodeTiled not available from the driver ({}, status {})",
                                      cudaGetErrorString(err), static_cast<int>(status)));
    }
    return reinterpret_cast<encode_tiled_fn>(f);
  }();
  return fn;
}

// Bytes of one swizzled box row: 128 (the widest swizzle), or 64 when a row
// of the tensor is shorter (e4m3 at d = 64); flash3_layout::row_bytes.
cuuint32_t box_row_bytes(const problem& p) {
  return static_cast<cuuint32_t>(std::min<std::int64_t>(128, p.d * dtype_bytes(p.type)));
}

// One 4-D map, boxes of one swizzle row (128 or 64 bytes) innermost, swizzled
// alike. e4m3 codes are moved as UINT8 (TMA does not convert).
void encode(CUtensorMap* map, const char* what, dtype t, const void* base, const cuuint64_t (&dims)[4],
            const cuuint64_t (&strides_bytes)[3], const cuuint32_t (&box)[4], cuuint32_t row_bytes) {
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUtensorMapDataType dt = t == dtype::bf16   ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                 : t == dtype::e4m3 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                                    : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult r = encoder()(map, dt, 4, const_cast<void*>(base), dims, strides_bytes, box, elem_strides,
                               CU_TENSOR_MAP_INTERLEAVE_NONE,
                               row_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw backend_error(
        fmt::format("flash3: cuTensorMapEncodeTiled({}: dims {}x{}x{}x{}, box {}x{}x{}x{}) failed "
                    "with CUresult {}",
                    what, dims[0], dims[1], dims[2], dims[3], box[0], box[1], box[2], box[3], static_cast<int>(r)));
}

}  // namespace

void encode_flash3_maps(flash3_params& prm, const void* q, const void* k, const void* v) {
  const problem& p = prm.p;
  const cuuint64_t e = static_cast<cuuint64_t>(dtype_bytes(p.type));
  const cuuint64_t d = static_cast<cuuint64_t>(p.d);
  const cuuint32_t row_bytes = box_row_bytes(p), box_cols = row_bytes / static_cast<cuuint32_t>(e);
  // Q as (d, H, Nq, B): a box (64, pack, queries_per_tile, 1) is one packed
  // row tile, query-major, heads of the group innermost.
  encode(&prm.tma_q, "Q", p.type, q,
         {d, static_cast<cuuint64_t>(p.H), static_cast<cuuint64_t>(p.Nq), static_cast<cuuint64_t>(p.B)},
         {static_cast<cuuint64_t>(p.Nq) * d * e, d * e, static_cast<cuuint64_t>(p.H * p.Nq) * d * e},
         {box_cols, static_cast<cuuint32_t>(prm.pack), static_cast<cuuint32_t>(prm.queries_per_tile), 1}, row_bytes);
  const cuuint64_t kv_dims[4] = {d, static_cast<cuuint64_t>(p.Nkv), static_cast<cuuint64_t>(p.Hkv),
                                 static_cast<cuuint64_t>(p.B)};
  const cuuint64_t kv_strides[3] = {d * e, static_cast<cuuint64_t>(p.Nkv) * d * e,
                                    static_cast<cuuint64_t>(p.Hkv * p.Nkv) * d * e};
  const cuuint32_t kv_box[4] = {box_cols, static_cast<cuuint32_t>(p.Bc), 1, 1};
  encode(&prm.tma_k, "K", p.type, k, kv_dims, kv_strides, kv_box, row_bytes);
  encode(&prm.tma_v, "V", p.type, v, kv_dims, kv_strides, kv_box, row_bytes);
}

flash3_params make_flash3_params(const problem& p, const input_scales& scales) {
  const flash3_plan s = plan_flash3(p);
  flash3_params prm;
  prm.p = s.geometry;
  prm.pack = s.pack;
  prm.queries_per_tile = s.queries_per_tile;
  prm.walk = s.walk;
  prm.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)));
  prm.scale_log2 = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.d)) * M_LOG2E);
  prm.descale_q = scales.q;
  prm.descale_k = scales.k;
  prm.descale_v = scales.v;
  return prm;
}

}  // namespace attnbench::cuda
