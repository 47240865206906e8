# Negative controls of the emulator tests (included by tests/emu.cmake): each
# plants one defect in a generated copy of a real kernel source and passes
# only if that family's emulator test then FAILS. Configure fails if the text
# to mutate is no longer in the source (update the control with the refactor).
#
#   ab_emu_negative(NAME FAMILY SOURCE FROM TO KIND TEST-ARGS...)
set(k ${CMAKE_SOURCE_DIR}/kernels/cuda)

# flash1: the barrier between loading the K/V tile and computing S removed
# (threads read K rows other threads have not written: the NaN poison).
ab_emu_negative(flash1_missing_barrier flash1 ${k}/flash1/flash1.cu
  "from_float<T>(0.f);\n    }\n    __syncthreads();\n" "from_float<T>(0.f);\n    }\n"
  gtest --gtest_filter=CudaFlash1.MatchesFp64ReferenceOnSmallShapes)

# linear: off-by-one causal bound in the intra-chunk block (j < i' instead
# of j <= i': every row loses its diagonal key).
ab_emu_negative_header(linear_causal_off_by_one linear ${k}/linear/feature_passes.cuh
  "if (kb + kk > i_first + r + shift) dot = 0.f;" "if (kb + kk >= i_first + r + shift) dot = 0.f;"
  gtest --gtest_filter=CudaLinear.MatchesFp64ReferenceOnSmallShapes)

# naive / naive_gqa_expand: wrong batch stride in the tiled GEMM (the batch
# index is dropped: every batch reads batch 0's Q, and P in the output pass).
ab_emu_negative(naive_batch_stride unfused ${k}/unfused/naive_gemm.cu
  "static_cast<const TA*>(g.a) + z * g.stride_a;" "static_cast<const TA*>(g.a) + (z % g.H) * g.stride_a;"
  gtest --gtest_filter=CudaUnfused.MatchesFp64ReferenceOnSmallShapes)

# cublas_unfused: wrong batch stride of Q in the QK^T GEMM (the GQA group
# factor forgotten). The baseline itself is then wrong: the tolerance cap
# (tests/gpu/tolerance.hpp) must notice instead of widening every bound.
ab_emu_negative(cublas_group_stride unfused ${k}/unfused/unfused_rows.cu
  "f.q, t, d, static_cast<long long>(g) * p.Nq * p.d," "f.q, t, d, static_cast<long long>(p.Nq) * p.d,"
  gtest --gtest_filter=CudaUnfused.MatchesFp64ReferenceOnSmallShapes)

# cublas_unfused backward: the D = rowsum(dO * O) term dropped from
# dS = P (dP - D) (every dQ and dK wrong by P D terms).
ab_emu_negative(unfused_bwd_no_d_term unfused ${k}/unfused/softmax_backward.cu
  "to_float(prow[j]) * (dprow[j] - d_row)" "to_float(prow[j]) * dprow[j]"
  gtest --gtest_filter=CudaUnfusedBwd.MatchesFp64ReferenceOnSmallShapes)

# cublas_unfused backward: dK summed over one query head instead of the KV
# head's whole group (the dK GEMM's inner dimension Nq, not G*Nq).
ab_emu_negative(unfused_bwd_dk_group unfused ${k}/unfused/unfused_rows.cu
  "d, nkv, group_rows, &scale, q_.get()" "d, nkv, static_cast<int>(p.Nq), &scale, q_.get()"
  gtest --gtest_filter=CudaUnfusedBwd.MatchesFp64ReferenceOnSmallShapes)

# On-device fp32 reference: off-by-one load bound of the query row into
# shared memory (the last element is never loaded: the poison is read).
ab_emu_negative(reference_load_bound reference ${k}/reference/reference_device.cu
  "for (std::int64_t x = lane; x < d; x += 32) qs[warp][x] = to_float(q[row * d + x]);"
  "for (std::int64_t x = lane; x < d - 1; x += 32) qs[warp][x] = to_float(q[row * d + x]);"
  gtest --gtest_filter=CudaReferenceFp32.SoftmaxMatchesFp64)
# Its GEMM path: every piece's softmax told it starts at the group's first row (the masks and
# lse of the rows after the first piece are another row's; the 7-row pieces of the test).
ab_emu_negative(reference_gemm_piece_rows reference ${k}/reference/reference_device.cu
  "32 * warps_per_block, 0, st, p, row0 + r0, rows," "32 * warps_per_block, 0, st, p, row0, rows,"
  gtest --gtest_filter=CudaReferenceFp32.SoftmaxMatchesFp64)

# Split-KV merge: partials read with a split-major stride the split kernel
# does not write (interleaved instead of [split][row]).
ab_emu_negative(merge_split_stride merge ${k}/flash2/flash2_splitkv_merge.cu
  "acc += w * prm.o_part[(s * rows_total + row) * p.d + col];"
  "acc += w * prm.o_part[(s + row * prm.splits) * p.d + col];"
  flash2 decode)

# flash2: instruction-level faults injected by the emulator (emu.flash2_faults,
# tests/emu/emu_test.cpp --faults): ldmatrix fragment order, a dropped .trans,
# cp.async.wait_group retiring one group fewer, no zero fill.

# flash2 backward, each against CudaFlash2Bwd.MatchesFp64ReferenceOnSmallShapes.
# The emulator cannot expose a non-atomic dQ accumulation (CTAs run one after another and a
# fiber switches only at a scheduling point, so a plain += never loses an update: its
# atomicAdd is that +=); the third control is the accumulator left uncleared instead.
# (a) the D term dropped: dS = P * dP instead of P * (dP - D).
ab_emu_negative_header(flash2_bwd_no_delta flash2_bwd ${k}/flash2/flash2_bwd_kernel.cuh
  "dpt[nt][2 * hh + e] = pe * (dpt[nt][2 * hh + e] - dd);" "dpt[nt][2 * hh + e] = pe * (dpt[nt][2 * hh + e] - 0.f * dd);"
  gtest --gtest_filter=CudaFlash2Bwd.MatchesFp64ReferenceOnSmallShapes)
# (b) dK/dV reduced over the wrong KV group: the query heads of the next KV head.
ab_emu_negative_header(flash2_bwd_wrong_group flash2_bwd ${k}/flash2/flash2_bwd_kernel.cuh
  "h0 = kvh * p.group() + blockIdx.z * heads;" "h0 = (kvh + 1) % p.Hkv * p.group() + blockIdx.z * heads;"
  gtest --gtest_filter=CudaFlash2Bwd.MatchesFp64ReferenceOnSmallShapes)
# (b2) the sparse terms dropped from the backward's mask (random blocks, strides and the
# per-head layout then see only their interval terms).
ab_emu_negative_header(flash2_bwd_no_sparse_terms flash2_bwd ${k}/flash2/flash2_bwd_kernel.cuh
  "sparse_bits |= 1u << c;" "sparse_bits |= 0u << c;"
  gtest --gtest_filter=CudaFlash2Bwd.MatchesFp64ReferenceOnSmallShapes)
# (b3) the sparse row's lists: the last query tile listed for each key tile not visited.
ab_emu_negative_header(flash2_bwd_list_drops_last flash2_bwd ${k}/flash2/flash2_bwd_kernel.cuh
  "if (n < prm.q_tiles.count(h, kt))" "if (n < prm.q_tiles.count(h, kt) - 1)"
  gtest --gtest_filter=CudaFlash2Bwd.SparseRowMatchesFp64ReferenceOnSmallShapes)
# (b5) the prefetched visit's copies not waited for (wait_group 1 leaves the newest group, this
# visit's rows, in flight: the emulator performs it at the last legal moment, so the products
# read the last visit's rows or, on the first, the NaN poison).
ab_emu_negative_header(flash2_bwd_prefetch_not_waited flash2_bwd ${k}/flash2/flash2_bwd_kernel.cuh
  "q0 = qt * BM; cp_async_wait<0>();" "q0 = qt * BM; cp_async_wait<1>();"
  gtest --gtest_filter=CudaFlash2Bwd.MatchesFp64ReferenceOnSmallShapes)
# (b6) a visit taken as whole (no per-element mask) when its first row is past a key's first
# visible row: causal's diagonal tiles then give the masked pairs their P.
ab_emu_negative_header(flash2_bwd_whole_visit_too_wide flash2_bwd ${k}/flash2/flash2_bwd_kernel.cuh
  "((q_first[hh] <= q0) & (q0 + BM <= q_end[hh]))" "((q_first[hh] < q0 + BM) & (q0 + BM <= q_end[hh]))"
  gtest --gtest_filter=CudaFlash2Bwd.MatchesFp64ReferenceOnSmallShapes)
# (b4) the head splits' reduce dropping the last split's dK, dV part (every GQA case of the
# small shapes splits its group whole).
ab_emu_negative(flash2_bwd_dkv_drops_last_split flash2_bwd ${k}/flash2/flash2_bwd_prepost.cu
  "for (int s = 0; s < prm.head_splits; ++s)" "for (int s = 0; s < prm.head_splits - 1; ++s)"
  gtest --gtest_filter=CudaFlash2Bwd.MatchesFp64ReferenceOnSmallShapes)
# (c) the fp32 dQ accumulator not cleared by the preprocess: a run adds to whatever the
# buffer held (the allocation's NaN poison, then the previous run's dQ).
ab_emu_negative(flash2_bwd_acc_not_cleared flash2_bwd ${k}/flash2/flash2_bwd_prepost.cu
  "if (acc) acc[c] = 0.f;" "if (acc) acc[c] += 0.f;"
  gtest --gtest_filter=CudaFlash2Bwd.MatchesFp64ReferenceOnSmallShapes)
# (d) the deterministic row's sum kernel dropping the last key tile of each wave a query tile
# visits.
ab_emu_negative(flash2_bwd_sum_drops_last_tile flash2_bwd ${k}/flash2/flash2_bwd_prepost.cu
  "kt < s.hi && kt < end; ++kt)" "kt < s.hi - 1 && kt < end; ++kt)"
  gtest --gtest_filter=CudaFlash2Bwd.DeterministicRowIsBitIdenticalAndMatchesFp64)
# (e) the accumulator not carried between the deterministic row's waves: only the S = 2 runs,
# with two waves, can see it.
ab_emu_negative(flash2_bwd_waves_not_carried flash2_bwd ${k}/flash2/flash2_bwd_prepost.cu
  "float sum = prm.kt_offset > 0 ? prm.dq_acc[x] : 0.f;" "float sum = 0.f;"
  gtest --gtest_filter=CudaFlash2Bwd.DeterministicRowIsBitIdenticalAndMatchesFp64)

# selective_scan (cuda): the carry across chunks dropped (each 32-step chunk starts from a zero
# state: every step from t = 32 on is wrong).
ab_emu_negative(selective_scan_drop_carry scan ${k}/scan/selective_scan.cu
  "const float hn = da * carry[x * N + n] + db;" "const float hn = db;"
  gtest --gtest_filter=CudaScans.SelectiveScanMatchesFp64Reference)

# selective_scan (cuda): the combine's operands swapped (the later lane's map applied first:
# a0 b1 + b0 instead of a1 b0 + b1).
ab_emu_negative(selective_scan_combine_swapped scan ${k}/scan/selective_scan.cu
  "db = da * pb + db;" "db = pa * db + pb;"
  gtest --gtest_filter=CudaScans.SelectiveScanMatchesFp64Reference)

# ssd (cuda): the carry across chunks dropped (out's exp(A_cs) C S_in term never added: each
# 64-step chunk starts from a zero state; every step from t = 64 on is wrong).
ab_emu_negative(ssd_drop_carry scan ${k}/scan/ssd.cu
  "op, acc, ci > 0 ? Np : 0," "op, acc, 0,"
  gtest --gtest_filter=CudaScans.SsdMatchesFp64Reference)

# ssd (cuda): the decay mask applied twice (exp(A_cs[t] - A_cs[s]) squared).
ab_emu_negative(ssd_decay_twice scan ${k}/scan/ssd.cu
  "acc[e] * expf(acs[t] - acs[s]) : 0.f;" "acc[e] * expf(acs[t] - acs[s]) * expf(acs[t] - acs[s]) : 0.f;"
  gtest --gtest_filter=CudaScans.SsdMatchesFp64Reference)

# ssd (cuda): the state's own decay over a chunk dropped in the carry (S = S_in + B^T ... instead
# of exp(A_cs[T-1]) S_in + ...: only the third chunk on sees it).
ab_emu_negative(ssd_state_not_decayed scan ${k}/scan/ssd.cu
  "s = decay * s + acc[e];" "s = s + acc[e];"
  gtest --gtest_filter=CudaScans.SsdMatchesFp64Reference)

# wkv (cuda): the running max not subtracted in the state update (the sums kept unscaled, e^k
# taken as is): large keys overflow to inf / inf, which must not pass.
ab_emu_negative(wkv_no_running_max scan ${k}/scan/wkv.cu
  "const float wo = w + o, mu = fmaxf(wo, kt);" "const float wo = w + o, mu = 0.f;"
  gtest --gtest_filter=CudaScans.WkvStaysFiniteWithLargeKeys)

# wkv6 (cuda): the decay never applied to the state (S = S + k v^T: the past never fades).
ab_emu_negative(wkv6_no_decay scan ${k}/scan/wkv6.cu
  "s[j] = w_s[j] * s[j] + kj * vi;" "s[j] = s[j] + kj * vi;"
  gtest --gtest_filter=CudaScans.Wkv6MatchesFp64Reference)

# performer (cuda): the keys' stabiliser s not subtracted (phi(k) = exp(u) as is): with
# a key aligned with a random feature (u ~ 128 at d = 256) the features overflow: inf / inf.
ab_emu_negative(performer_no_key_stabiliser performer_routing ${k}/approx/performer.cu
  "return expf(ku[(kvz * Nkv + j) * features + f] - kmax[kvz]);" "return expf(ku[(kvz * Nkv + j) * features + f]);"
  gtest --gtest_filter=CudaPerformerRouting.PerformerStableOnAlignedInputs)

# routing (cuda): every cluster's queries attend to the next cluster's keys (a token routed to
# the wrong cluster), as the CPU row's planted defect.
ab_emu_negative(routing_wrong_cluster performer_routing ${k}/approx/routing.cu
  "const std::int32_t* kj = a.kidx + (kvz * a.c + cl) * a.wk;"
  "const std::int32_t* kj = a.kidx + (kvz * a.c + (cl + 1) % a.c) * a.wk;"
  gtest --gtest_filter=CudaPerformerRouting.RoutingMatchesFp64Reference)

# additive (cuda): tanh replaced by the identity (the score becomes v^T (W q + U k), a dot
# product: the CPU row's control, planted in the CUDA kernel).
ab_emu_negative(additive_tanh_identity additive_linformer ${k}/approx/additive.cu
  "s += vv[t] * tanh_sfu(qr[t] + kc[t]);" "s += vv[t] * (qr[t] + kc[t]);"
  gtest --gtest_filter=CudaAdditiveLinformer.AdditiveMatchesFp64Reference)

# additive (cuda): the accumulator not rescaled when the running max grows (alpha dropped):
# wrong from the second key tile on.
ab_emu_negative(additive_no_rescale additive_linformer ${k}/approx/additive.cu
  "acc[e] = alpha[r] * acc[e] + pv;" "acc[e] = acc[e] + pv;"
  gtest --gtest_filter=CudaAdditiveLinformer.AdditiveMatchesFp64Reference)

# linformer (cuda): E read as stored instead of transposed (op N for op T in the projection GEMM:
# E^T's transpose where Nkv = k, an invalid leading dimension where Nkv > k), the CPU row's control.
ab_emu_negative(linformer_projection_transposed additive_linformer ${k}/approx/linformer.cu
  "h, CUBLAS_OP_N, CUBLAS_OP_T, d, k, n," "h, CUBLAS_OP_N, CUBLAS_OP_N, d, k, n,"
  gtest --gtest_filter=CudaAdditiveLinformer.LinformerMatchesFp64Reference)

# linformer (cuda): E and F swapped for the keys (K-bar = F^T K).
ab_emu_negative(linformer_e_f_swapped additive_linformer ${k}/approx/linformer.cu
  "project(k_.get(), e_.get<const float>()" "project(k_.get(), f_.get<const float>()"
  gtest --gtest_filter=CudaAdditiveLinformer.LinformerMatchesFp64Reference)
