// The exp roof's ceilings: how many exponentials per second the machine
// executes, beside the copy bandwidth and GEMM throughput in the JSON context
// (docs/json_schema.md):
//   ceilings.measured.exps_per_s     measured: the CPU kernels' own vectorised exp on
//                                    every thread; on CUDA independent ex2.approx chains
//                                    on every SM (harness/cuda/exp_ceiling.cpp)
//   ceilings.measured.exp_method     how (function or kernel, threads, steps, the check)
//   ceilings.theoretical.exps_per_s  GPUs: SMs x 16 exp2 per clock x clock (datasheet parts
//   ceilings.theoretical.exp_source  at the clock of their tensor figures; others at the
//                                    maximum clock, an upper bound), and which
// A measurement whose result check fails records exps_per_s null with the reason.
#pragma once

#include <nlohmann/json.hpp>

#include "core/variant.hpp"  // backend_kind

namespace attnbench {

// The CPU exp ceiling: kernels/cpu/exp_throughput.hpp's chains on all OpenMP threads,
// sized to ~20 ms a run, best of 5 (~0.15 s in all). {"exps_per_s", "exp_method"}.
nlohmann::json measure_exp_ceiling_cpu();

// The CUDA module registers its measurement at static initialisation (as its backend).
void register_cuda_exp_ceiling(nlohmann::json (*measure)());

// The theoretical exp rate of the device a backend context describes ({"exps_per_s",
// "exp_source"}), or null: CPUs have none; a GPU in harness/datasheet.cpp's table from
// its SM count and the clock of its tensor figures; another GPU of compute capability
// 8.x or 9.0 from device_info's sm_count and maximum clock (16 exp2 per clock per SM).
nlohmann::json theoretical_exp_ceiling(const nlohmann::json& backend_context);

// Adds the exp ceilings to a backend's context (backend::context's result, in place):
// the theoretical ones when known, the measured ones when `measure` (unless already there:
// the cpu backend measures its own, harness/cpu_backend.cpp). make_context and the
// `ceilings` command call it; on CUDA the measurement is the module's registered one.
void add_exp_ceilings(nlohmann::json& backend_context, backend_kind kind, bool measure);

}  // namespace attnbench
