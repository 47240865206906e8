// The preset sweeps (docs/sweeps.md). Each group is one chart's data: seq
// (time vs length), tiles (Br x Bc), masks, density (block-sparse masks),
// gqa (KV heads), decode, fp8 (e4m3 beside bf16), alternatives (the scans beside causal flash2),
// train (fwd, bwd, fwd_bwd). Dtypes are left to the
// backend default (cuda: bf16 + fp16, cpu: fp32) except in fp8. The tiles
// groups select the rows tagged `tiled`, the fp8 groups name their rows by
// backend (cpu:flash2, cuda:flash3, cuda:flash3_fp8), the others run every row
// of the backend.
#include <fmt/format.h>

#include "harness/sweep.hpp"

namespace attnbench {

namespace {

mask_spec m(const char* s) { return parse_mask(s); }

sweep_group group(std::string name, sweep_axes a) { return {std::move(name), std::move(a)}; }

// fp8 beside bf16 (docs/cpu.md) on the same shapes, one dtype per group so that no
// row meets a dtype it does not claim: cpu flash2 (it claims both) at CPU
// sizes; cuda flash3 (bf16) and flash3_fp8 (e4m3) at hd 64/128/256 with the
// issue's target (hd 128, non-causal, N >= 4k) among the lengths. Each group
// names rows of one backend only, so it is empty on the other.
void add_fp8_groups(sweep_spec& s, std::vector<std::int64_t> cpu_seq, std::int64_t cpu_batch, std::int64_t cpu_heads,
                    std::vector<std::int64_t> cuda_seq) {
  sweep_axes cpu;
  cpu.variant = {"cpu:flash2"};
  cpu.type = {dtype::bf16, dtype::e4m3};
  cpu.seq = std::move(cpu_seq);
  cpu.batch = {cpu_batch};
  cpu.heads = {cpu_heads};
  cpu.head_dim = {64, 128};
  cpu.mask = {m("none"), m("causal")};
  s.groups.push_back(group("fp8", cpu));
  sweep_axes cuda;
  cuda.seq = std::move(cuda_seq);
  cuda.batch = {2};
  cuda.heads = {16};
  cuda.head_dim = {64, 128, 256};
  cuda.mask = {m("none"), m("causal")};
  cuda.variant = {"cuda:flash3"};
  cuda.type = {dtype::bf16};
  s.groups.push_back(group("fp8", cuda));
  cuda.variant = {"cuda:flash3_fp8"};
  cuda.type = {dtype::e4m3};
  s.groups.push_back(group("fp8", cuda));
}

// Attention against its alternatives (docs/alternatives.md): causal flash2 and the
// scans (tag:scan) on the problem of the same width over L, for the crossover chart. flash2
// and flash3 are named per backend, as the fp8 groups name their rows: the attention the scans
// are measured against (cudnn_sdpa is not named: a build without cuDNN has no such row, and an
// unknown name is an error; scripts/gpu_check.sh adds it where built). tag:scan is taken per
// backend (select_variants): a cuda run gets the CUDA scan rows (kernels/cuda/scan), a cpu run
// the CPU ones as before. The crossover length does not depend on the width
// (both costs are linear in it), so the width is small: H d = 256 in quick, 1024 in full.
void add_alternatives_group(sweep_spec& s, std::vector<std::int64_t> seq, std::int64_t heads,
                            std::vector<std::string> variants = {"cpu:flash2", "cuda:flash2", "cuda:flash3",
                                                                 "tag:scan"}) {
  sweep_axes a;
  a.variant = std::move(variants);
  a.seq = std::move(seq);
  a.batch = {1};
  a.heads = {heads};
  a.head_dim = {64};
  a.mask = {m("causal")};
  a.state = {16};
  a.groups = {1};
  s.groups.push_back(group("alternatives", a));
}

// Training (docs/backward.md): fwd, bwd and fwd_bwd of every row on the same
// problems; rows that do not claim a pass are skipped with the reason, and the fwd
// entries already run by the seq group are not run twice (the first group wins).
void add_train_group(sweep_spec& s, std::vector<std::int64_t> seq, std::int64_t batch, std::int64_t heads) {
  sweep_axes train;
  train.seq = std::move(seq);
  train.batch = {batch};
  train.heads = {heads};
  train.head_dim = {64, 128};
  // Block-sparse beside dense: flash2's backward masks it over the covering walk, sparse's
  // visits only the tile pairs with a visible pair (docs/backward.md).
  train.mask = {m("none"), m("causal"), m("causal+random:64,4")};
  train.pass = {pass_kind::fwd, pass_kind::bwd, pass_kind::fwd_bwd};
  s.groups.push_back(group("train", train));
}

// The comparison section (docs/approximations.md): the comparison rows beside the exact
// CPU rows on the same problems, dense (seq x seq, `heads` heads, under `masks`) and the
// decoder step (Nq = 1 against nkv keys, no mask). On cuda the exact fused rows run these small
// shapes (the comparison rows are CPU only).
void add_comparison_groups(sweep_spec& s, std::int64_t seq, std::int64_t heads, std::vector<mask_spec> masks,
                           std::int64_t nkv, std::int64_t decode_heads) {
  sweep_axes dense;
  dense.variant = {"tag:comparison", "tag:fused"};  // the exact fused rows: flash1, flash2, linear
  dense.seq = {seq};
  dense.heads = {heads};
  dense.head_dim = {64};
  dense.mask = std::move(masks);
  s.groups.push_back(group("comparison", dense));
  sweep_axes step = dense;
  step.seq = {};
  step.nq = {1};
  step.nkv = {nkv};
  step.heads = {decode_heads};
  step.mask = {m("none")};
  s.groups.push_back(group("comparison", step));
}

// quick: every chart on 2 CPU cores in <= 3 minutes (measured in the README).
sweep_spec quick() {
  sweep_spec s{"quick", {}};
  sweep_axes seq;
  seq.seq = {256, 512, 1024, 2048};
  seq.head_dim = {64, 128};
  seq.heads = {8};
  seq.mask = {m("none"), m("causal")};
  s.groups.push_back(group("seq", seq));

  sweep_axes tiles;
  tiles.variant = {"tag:tiled"};
  tiles.seq = {1024};
  tiles.head_dim = {64};
  tiles.mask = {m("causal")};
  tiles.block = {{32, 32}, {64, 32}, {32, 64}, {64, 64}, {128, 64}, {64, 128}, {128, 128}};
  s.groups.push_back(group("tiles", tiles));

  sweep_axes masks;
  masks.seq = {1024};
  masks.head_dim = {64};
  masks.mask = {m("none"),
                m("causal"),
                m("local:255,0"),
                m("local:127,127"),
                m("local:127,127+global:16"),
                m("causal+global:16")};
  s.groups.push_back(group("masks", masks));

  // Block-sparse density (docs/masks.md): BigBird random blocks, r of the 16 key
  // blocks per query block (density r / 16), beside dense none for the speedup.
  sweep_axes density;
  density.seq = {1024};
  density.head_dim = {64};
  density.mask = {m("none"), m("random:64,1"), m("random:64,4"), m("random:64,16")};
  s.groups.push_back(group("density", density));

  sweep_axes gqa;
  gqa.seq = {1024};
  gqa.heads = {8};
  gqa.kv_heads = {{8, 0}, {4, 0}, {2, 0}, {1, 0}};
  gqa.head_dim = {64};
  gqa.mask = {m("causal")};
  s.groups.push_back(group("gqa", gqa));

  sweep_axes decode;
  decode.nq = {1, 4};
  decode.nkv = {4096, 16384};
  decode.heads = {8};
  decode.kv_heads = {{0, 1}, {1, 0}};
  decode.head_dim = {128};
  decode.mask = {m("causal")};
  s.groups.push_back(group("decode", decode));

  add_fp8_groups(s, {1024}, 1, 8, {1024, 4096, 16384});
  add_alternatives_group(s, {256, 1024, 4096}, 4);
  add_train_group(s, {1024}, 1, 8);
  // ~0.4 s a configuration on 2 cores: 10 runs (the causal comparison is in full).
  add_comparison_groups(s, 512, 2, {m("none")}, 2048, 4);
  return s;
}

// full: GPU-sized shapes (seq up to 16k, d 64/128).
sweep_spec full() {
  sweep_spec s{"full", {}};
  sweep_axes seq;
  seq.seq = {512, 1024, 2048, 4096, 8192, 16384};
  seq.batch = {2};
  seq.heads = {16};
  seq.head_dim = {64, 128};
  seq.mask = {m("none"), m("causal")};
  s.groups.push_back(group("seq", seq));

  sweep_axes tiles;
  tiles.variant = {"tag:tiled"};
  tiles.seq = {4096};
  tiles.batch = {2};
  tiles.heads = {16};
  tiles.head_dim = {64, 128};
  tiles.mask = {m("causal")};
  tiles.block = {{64, 32}, {32, 64}, {64, 64}, {128, 32}, {128, 64}, {64, 128}, {128, 128}};
  s.groups.push_back(group("tiles", tiles));

  sweep_axes masks;
  masks.seq = {8192};
  masks.heads = {16};
  masks.head_dim = {128};
  masks.mask = {m("none"),
                m("causal"),
                m("local:1023,0"),
                m("local:4095,0"),
                m("local:255,255"),
                m("local:255,255+global:64"),
                m("causal+global:64")};
  s.groups.push_back(group("masks", masks));

  // Block-sparse density (docs/masks.md): r of the 32 key blocks of 256 keys per
  // query block, density 1/32 .. 1 (r = 16 is the largest r: 1/2), dense none.
  sweep_axes density;
  density.seq = {8192};
  density.heads = {16};
  density.head_dim = {128};
  density.mask = {m("none"),         m("random:256,1"), m("random:256,2"),
                  m("random:256,4"), m("random:256,8"), m("random:256,16")};
  s.groups.push_back(group("density", density));

  sweep_axes gqa;
  gqa.seq = {4096};
  gqa.batch = {2};
  gqa.heads = {32};
  gqa.kv_heads = {{0, 1}, {0, 4}, {0, 8}, {1, 0}};
  gqa.head_dim = {128};
  gqa.mask = {m("causal")};
  s.groups.push_back(group("gqa", gqa));

  sweep_axes decode;
  decode.nq = {1, 4};
  decode.nkv = {4096, 16384, 65536};
  decode.batch = {2};
  decode.heads = {32};
  decode.kv_heads = {{0, 1}, {0, 8}};
  decode.head_dim = {128};
  decode.mask = {m("causal")};
  s.groups.push_back(group("decode", decode));

  add_fp8_groups(s, {1024, 4096}, 2, 16, {1024, 2048, 4096, 8192, 16384});
  add_alternatives_group(s, {1024, 2048, 4096, 8192, 16384, 32768, 65536}, 16);
  // The crossover on a GPU beyond 64k (docs/alternatives.md: 1k-512k memory permitting): the
  // CUDA rows only, named (tag:scan would also take the CPU scans on a cpu run, with no attention
  // beside them). Causal flash2 at 512k, H 16, d 64 is 5.6e14 FLOPs (~2 s at 300 TFLOP/s); what
  // does not fit is skipped by admission, not fatal.
  add_alternatives_group(s, {131072, 262144, 524288}, 16,
                         {"cuda:flash2", "cuda:flash3", "cuda:selective_scan", "cuda:ssd", "cuda:wkv", "cuda:wkv6"});
  add_train_group(s, {1024, 2048, 4096, 8192}, 2, 16);
  add_comparison_groups(s, 2048, 8, {m("none"), m("causal")}, 16384, 8);
  return s;
}

// decode: one or a few new tokens against a long KV cache. B = 1: at 128k keys
// and Hkv = H, K and V alone are 4 GiB of host fp32 inputs, generated
// single-threaded (tensors.cpp); larger batches are one --batch away.
sweep_spec decode() {
  sweep_spec s{"decode", {}};
  sweep_axes a;
  a.nq = {1, 4};
  a.nkv = {1024, 4096, 16384, 65536, 131072};
  a.batch = {1};
  a.heads = {32};
  a.kv_heads = {{0, 1}, {0, 4}, {0, 8}, {1, 0}};
  a.head_dim = {128};
  a.mask = {m("causal")};
  s.groups.push_back(group("decode", a));
  return s;
}

}  // namespace

std::vector<std::string> preset_names() { return {"quick", "full", "decode"}; }

sweep_spec make_preset(std::string_view name) {
  if (name == "quick") return quick();
  if (name == "full") return full();
  if (name == "decode") return decode();
  throw input_error(fmt::format("unknown preset '{}' (expected quick, full or decode)", name));
}

}  // namespace attnbench
