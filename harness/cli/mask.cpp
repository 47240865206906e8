// `attnbench mask`: a mask's visibility as a .npy of uint8 [heads, Nq, Nkv] (1 = key j visible
// to query i; heads = H for a per-head layout, else 1), from core/mask.hpp's is_visible: what
// scripts/peers.py hands PyTorch and FlexAttention for the masks it cannot build itself
// (strided, random, layout), so both sides run the same mask from one definition.
#include <fmt/format.h>

#include "core/mask.hpp"
#include "harness/cli/args.hpp"
#include "harness/cli/commands.hpp"
#include "harness/npy.hpp"
#include "harness/safe_write.hpp"

namespace attnbench {

namespace {

// 1 GiB of uint8: a CPU peer's problems are far below it (N 2048: 4 MiB).
constexpr std::int64_t max_mask_bytes = std::int64_t{1} << 30;

struct mask_cli {
  std::string mask, out;
  std::int64_t nq = 0, nkv = 0, heads = 1;
};

mask_cli parse_mask_cli(const std::vector<std::string>& args) {
  mask_cli c;
  cli::arg_walker w(args, "mask");
  while (w.next()) {
    const std::string& n = w.name();
    if (n == "--mask")
      c.mask = w.value();
    else if (n == "--nq")
      c.nq = parse_positive(w.value(), "--nq");
    else if (n == "--nkv")
      c.nkv = parse_positive(w.value(), "--nkv");
    else if (n == "--heads")
      c.heads = parse_positive(w.value(), "--heads");
    else if (n == "--out")
      c.out = w.value();
    else
      w.unknown();
  }
  for (auto [v, what] :
       {std::pair{c.mask.empty(), "--mask"}, {c.nq == 0, "--nq"}, {c.nkv == 0, "--nkv"}, {c.out.empty(), "--out"}})
    if (v) throw input_error(fmt::format("'attnbench mask' needs {}", what));
  return c;
}

}  // namespace

int cli::cmd_mask(const std::vector<std::string>& args) {
  const mask_cli c = parse_mask_cli(args);
  const problem p = make_problem(1, c.heads, c.heads, c.nq, c.nkv, 64, dtype::fp32, c.mask);  // validates
  const std::int64_t heads = p.mask.per_head() ? p.H : 1;
  if (heads * p.Nq * p.Nkv > max_mask_bytes)
    throw input_error(fmt::format("mask of {} x {} x {} exceeds {} bytes", heads, p.Nq, p.Nkv, max_mask_bytes));
  check_writable(c.out, "--out");
  std::vector<std::uint8_t> vis(static_cast<std::size_t>(heads * p.Nq * p.Nkv));
  std::int64_t visible = 0;
  for (std::int64_t h = 0; h < heads; ++h)
    for (std::int64_t i = 0; i < p.Nq; ++i)
      for (std::int64_t j = 0; j < p.Nkv; ++j)
        visible += vis[static_cast<std::size_t>((h * p.Nq + i) * p.Nkv + j)] = is_visible(p, h, i, j) ? 1 : 0;
  write_npy(c.out, {heads, p.Nq, p.Nkv}, vis);
  fmt::print(stderr, "attnbench: wrote {} ({} x {} x {}, {} visible pairs)\n", c.out, heads, p.Nq, p.Nkv, visible);
  return exit_ok;
}

}  // namespace attnbench
