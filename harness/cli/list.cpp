// `attnbench list`: each row's declared capabilities and tags (not a probe).
#include <fmt/format.h>

#include <algorithm>

#include "harness/cli/args.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cuda_module.hpp"
#include "kernels/registry.hpp"

namespace attnbench::cli {

namespace {

std::string supports_summary(const variant& v) {
  std::vector<std::string> types, masks, tags, dims, passes;
  for (dtype t : v.caps.dtypes) types.emplace_back(to_string(t));
  for (auto m : mask_feature_names(v.caps.masks)) masks.emplace_back(m);
  for (tag t : v.tags) tags.emplace_back(to_string(t));
  for (auto d : v.caps.head_dims) dims.push_back(std::to_string(d));
  for (auto p : pass_feature_names(v.caps.passes)) passes.emplace_back(p);
  std::vector<std::string> bwd_masks;
  for (auto m : mask_feature_names(v.caps.bwd_masks)) bwd_masks.emplace_back(m);
  auto list = [](const std::vector<std::string>& l, const char* sep) {
    return l.empty() ? std::string("-") : fmt::format("{}", fmt::join(l, sep));
  };
  return fmt::format("dtypes {}; masks {}; d {}; gqa {}; Nq {}; tags {}; pass {}{}", list(types, ","), list(masks, ","),
                     dims.empty() ? "any" : list(dims, ","),
                     v.caps.gqa_only ? "only"
                     : v.caps.gqa    ? "yes"
                                     : "no",
                     v.caps.max_nq > 0 ? fmt::format("<= {}", v.caps.max_nq) : "any", list(tags, ","),
                     list(passes, ","),
                     v.caps.bwd_masks ? fmt::format(" (bwd masks {})", list(bwd_masks, ",")) : std::string());
}

}  // namespace

int cmd_list(const std::vector<std::string>& args) {
  std::string which = "all";
  arg_walker w(args, "list");
  while (w.next()) {
    if (w.name() == "--backend") {
      which = w.value();
      if (which != "all") parse_backend_choice(which);
    } else {
      w.unknown();
    }
  }
  // The CUDA rows come with the CUDA module; --backend cpu loads no CUDA library.
  if (std::string why; which != "cpu" && !load_cuda_module(&why))
    fmt::print(stderr, "attnbench: no cuda rows: {}\n", why);
  int n = 0;
  std::size_t width = 20;  // the longest row name (flash2_bwd_deterministic: 24)
  for (const auto& v : registry()) width = std::max(width, v.name.size());
  for (const auto& v : registry()) {
    if (which != "all" && which != "auto" && to_string(v.backend) != which) continue;
    fmt::print("{:<{}} {:<5} {:<8} {}\n", v.name, width, to_string(v.backend), to_string(v.math), supports_summary(v));
    if (!v.summary.empty()) fmt::print("{:<{}} model: {}\n", "", width, v.summary);
    ++n;
  }
  if (n == 0) fmt::print(stderr, "attnbench: no variants registered for backend '{}'\n", which);
  return exit_ok;
}

}  // namespace attnbench::cli
