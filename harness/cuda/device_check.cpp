#include "harness/cuda/device_check.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include "harness/cuda/device_wait.hpp"
#include "kernels/cuda/reference/reference_device.cuh"
#include "kernels/cuda/reference/row_check.cuh"

namespace attnbench::cuda {

namespace {

problem problem_of(problem p) {  // tiles do not change the reference
  p.Br = p.Bc = 64;
  return p;
}

device_buffer upload_bytes(const void* src, std::size_t bytes) {
  device_buffer b(bytes);
  if (bytes > 0) ATTN_CUDA_CHECK(cudaMemcpyAsync(b.get(), src, bytes, cudaMemcpyHostToDevice, stream()));
  return b;
}

device_buffer upload_floats(const std::vector<float>& x) { return upload_bytes(x.data(), x.size() * sizeof(float)); }

// Waits for the stream under the current configuration's deadline, or a longer one for
// `flops` of the reference: its bound taken at 2 TFLOP/s (a third of the ~6 TFLOP/s
// estimated for the warp-per-row kernel on an H200), times the watchdog's factor.
void wait_for(const char* what, double flops) {
  device_deadline d = current_deadline();
  d.bound_s = std::max(d.bound_s, flops / 2e12);
  const double limit = d.for_launches(1);
  const wait_clock clock = steady_wait_clock();
  const double t0 = clock.now_s();
  if (!wait_stream_for(stream(), limit, clock)) device_wait_expired(what, clock.now_s() - t0, d.describe(1));
}

}  // namespace

std::int64_t device_output_check::reference_bytes(const problem& p) {
  std::int64_t bytes = 4 * (p.o_elems() + p.rows());
  if (p.type == dtype::e4m3) bytes += 4 * (p.q_elems() + 2 * p.kv_elems());
  return bytes;
}

double device_output_check::reference_flops(const problem& p) {
  return 6.0 * double(p.d) * double(p.Nkv) * double(p.rows());
}

void device_output_check::keep_only(const problem& p) {
  if (ref_ && !(ref_->p == problem_of(p))) ref_.reset();
  if (have_empty_ && !(empty_for_ == problem_of(p))) {
    empty_ = device_buffer();
    have_empty_ = false;
  }
}

void device_output_check::make_reference(const device_runner& r, const host_inputs& in, attention_math m) {
  kept k;
  k.p = problem_of(in.p);
  k.m = m;
  // The sparse terms (and a layout's bits) where the kernel can read them.
  device_mask mask = mask_on_device(in.p, stream());
  problem p = mask.p;
  k.sparse = std::move(mask.terms);
  k.layout = std::move(mask.layout);
  k.o = device_buffer(static_cast<std::size_t>(p.o_elems()) * sizeof(float));
  k.lse = device_buffer(static_cast<std::size_t>(p.rows()) * sizeof(float));
  const device_runner::device_tensors t = r.tensors();
  device_buffer q32, k32, v32;
  const void *q = t.q, *kk = t.k, *v = t.v;
  if (p.type == dtype::e4m3) {  // the codes x scales, exact in fp32 (host_inputs)
    q32 = upload_floats(in.q);
    k32 = upload_floats(in.k);
    v32 = upload_floats(in.v);
    q = q32.get();
    kk = k32.get();
    v = v32.get();
    p.type = dtype::fp32;
  }
  reference_workspace ws;  // freed after the wait below
  if (m == attention_math::softmax)
    ws = reference_softmax_fp32_device(p, q, kk, v, k.o.get<float>(), k.lse.get<float>(), stream());
  else
    reference_linear_fp32_device(p, q, kk, v, k.o.get<float>(), stream());
  wait_for("the on-device fp32 reference of the output check", reference_flops(p));
  ref_ = std::move(k);
  ++references_made_;
}

full_check device_output_check::check(const device_runner& r, const host_inputs& in, attention_math m,
                                      std::span<const std::uint8_t> rows_without_keys, std::int64_t free_bytes) {
  const problem& p = in.p;
  keep_only(p);
  // The on-device fp32 reference exists for softmax and linear attention only (as the host's
  // all-rows twin, harness/validation.cpp); other maths are scanned and left to the fp64 sample.
  const bool has_twin = m == attention_math::softmax || m == attention_math::linear;
  // A row without a twin (a scan) leaves the kept reference to the next row of the problem: at
  // the crossover's L 64k, causal, H 16, d 64 it costs ~13 s on the H200, made again for
  // cudnn_sdpa after the scans.
  if (ref_ && ref_->m != m && has_twin) ref_.reset();
  if (!ref_ && has_twin) {
    // What the kept reference and the scan need, with room for the libraries' workspaces.
    const std::int64_t need = reference_bytes(p) + 16 * p.rows() + (std::int64_t{256} << 20);
    if (need <= free_bytes) make_reference(r, in, m);
  }
  if (!have_empty_) {
    empty_ = upload_bytes(rows_without_keys.data(), rows_without_keys.size());
    empty_for_ = problem_of(p);
    have_empty_ = true;
  }
  device_buffer verdicts(static_cast<std::size_t>(p.rows()) * sizeof(row_verdict));
  const device_runner::device_tensors t = r.tensors();
  row_check_args a;
  a.rows = p.rows();
  a.d = p.d;
  a.hq = p.H * p.Nq;
  a.o = t.o;
  a.o_type = output_dtype(p.type);
  a.lse = t.lse;
  a.empty = empty_.get<const std::uint8_t>();
  const bool compared = ref_ && ref_->m == m;
  if (compared) {
    a.ref_o = ref_->o.get<const float>();
    if (m == attention_math::softmax && t.lse) a.ref_lse = ref_->lse.get<const float>();
  }
  a.out = verdicts.get<row_verdict>();
  row_check_device(a, stream());
  std::vector<row_verdict> host(static_cast<std::size_t>(p.rows()));
  ATTN_CUDA_CHECK(cudaMemcpyAsync(host.data(), verdicts.get(), verdicts.bytes(), cudaMemcpyDeviceToHost, stream()));
  wait_for("the output check (every row)", 0);
  return reduce_verdicts(host, compared);
}

}  // namespace attnbench::cuda
