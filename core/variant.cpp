#include "core/variant.hpp"

#include <algorithm>
#include <string>

namespace attnbench {

std::string_view to_string(backend_kind b) { return b == backend_kind::cpu ? "cpu" : "cuda"; }

std::string_view to_string(attention_math m) {
  switch (m) {
    case attention_math::softmax: return "softmax";
    case attention_math::linear: return "linear";
    case attention_math::selective_scan: return "selective_scan";
    case attention_math::wkv: return "wkv";
    case attention_math::wkv6: return "wkv6";
    case attention_math::linformer: return "linformer";
    case attention_math::performer: return "performer";
    case attention_math::additive: return "additive";
    case attention_math::ssd: return "ssd";
    case attention_math::routing: return "routing";
  }
  return "?";
}

bool approximates_softmax(attention_math m) {
  return m == attention_math::linformer || m == attention_math::performer || m == attention_math::routing;
}

std::string_view to_string(tag t) {
  switch (t) {
    case tag::baseline: return "baseline";
    case tag::unfused: return "unfused";
    case tag::fused: return "fused";
    case tag::tiled: return "tiled";
    case tag::library: return "library";
    case tag::decode: return "decode";
    case tag::gqa: return "gqa";
    case tag::scan: return "scan";
    case tag::comparison: return "comparison";
  }
  return "?";
}

unsigned mask_features_of(const mask_spec& m) {
  unsigned f = 0;
  switch (m.kind) {
    case mask_kind::none: f = mask_none; break;
    case mask_kind::causal: f = mask_causal; break;
    case mask_kind::local: f = mask_local; break;
  }
  if (m.global > 0) f |= mask_global;
  if (m.has_sparse() && m.kind == mask_kind::none) f &= ~unsigned{mask_none};  // no base: nothing to ask
  if (m.has_strided()) f |= mask_strided;
  if (m.has_random()) f |= mask_random;
  if (m.has_layout()) f |= mask_layout;
  if (m.per_head()) f |= mask_layout_heads;
  return f;
}

std::vector<std::string_view> mask_feature_names(unsigned features) {
  std::vector<std::string_view> out;
  if (features & mask_none) out.push_back("none");
  if (features & mask_causal) out.push_back("causal");
  if (features & mask_local) out.push_back("local");
  if (features & mask_global) out.push_back("global");
  if (features & mask_strided) out.push_back("strided");
  if (features & mask_random) out.push_back("random");
  if (features & mask_layout) out.push_back("layout");
  if (features & mask_layout_heads) out.push_back("layout_heads");
  return out;
}

unsigned pass_feature_of(pass_kind p) {
  switch (p) {
    case pass_kind::fwd: return pass_fwd;
    case pass_kind::bwd: return pass_bwd;
    case pass_kind::fwd_bwd: return pass_fwd_bwd;
  }
  return 0;
}

std::vector<std::string_view> pass_feature_names(unsigned features) {
  std::vector<std::string_view> out;
  for (pass_kind p : {pass_kind::fwd, pass_kind::bwd, pass_kind::fwd_bwd})
    if (features & pass_feature_of(p)) out.push_back(to_string(p));
  return out;
}

namespace {

std::string join_dtypes(const std::vector<dtype>& ts) {
  std::string s;
  for (auto t : ts) s += (s.empty() ? "" : ", ") + std::string(to_string(t));
  return s;
}

std::string join_ints(const std::vector<std::int64_t>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

// "none", "none and causal", "none, causal and local"
std::string join_names(const std::vector<std::string_view>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + std::string(v[i]);
  return s;
}

}  // namespace

support variant::supports(const problem& p) const {
  const std::string who = name + " (" + std::string(to_string(backend)) + ")";
  const auto& c = caps;
  if (!(c.passes & pass_feature_of(p.pass)))
    return support::no(who + " runs passes " + join_names(pass_feature_names(c.passes)) + " only, not " +
                       std::string(to_string(p.pass)));
  if (!c.dtypes.empty() && std::find(c.dtypes.begin(), c.dtypes.end(), p.type) == c.dtypes.end())
    return support::no(who + " computes in " + join_dtypes(c.dtypes) + ", not " + std::string(to_string(p.type)));
  const unsigned need = mask_features_of(p.mask);
  if ((need & c.masks) != need)
    return support::no(who + " supports masks " + join_names(mask_feature_names(c.masks)) + " only, not " +
                       to_string(p.mask));
  if (p.pass != pass_kind::fwd && c.bwd_masks && (need & c.bwd_masks) != need)
    return support::no(who + "'s backward supports masks " + join_names(mask_feature_names(c.bwd_masks)) +
                       " only, not " + to_string(p.mask));
  if (!c.head_dims.empty() && std::find(c.head_dims.begin(), c.head_dims.end(), p.d) == c.head_dims.end())
    return support::no(who + " is built for head dims " + join_ints(c.head_dims) + ", not d=" + std::to_string(p.d));
  if (!c.gqa && p.Hkv != p.H)
    return support::no(who + " needs Hkv = H (got H=" + std::to_string(p.H) + ", Hkv=" + std::to_string(p.Hkv) + ")");
  if (c.gqa_only && p.Hkv == p.H)
    return support::no(who + " exists for GQA and needs Hkv < H (got H == Hkv = " + std::to_string(p.H) + ")");
  if (c.max_nq > 0 && p.Nq > c.max_nq)
    return support::no(who + " handles Nq <= " + std::to_string(c.max_nq) + ", got Nq=" + std::to_string(p.Nq));
  return check ? check(p) : support::yes();
}

problem untiled_problem(const problem& p) {
  problem r = p;
  r.Br = r.Bc = default_tile;
  return r;
}

bool variant::has(tag t) const { return std::find(tags.begin(), tags.end(), t) != tags.end(); }

std::string variant::benchmark_name(const problem& p) const {
  const problem r = resolved(p);
  std::string s = attnbench::benchmark_name(name, to_string(backend), r);
  // The Mamba scans read the state axes; every other row ignores them, so their names (and
  // the sweep's de-duplication by name) do not change with them.
  if (reads_state_axes(math)) s += "/N:" + std::to_string(r.dstate) + "/G:" + std::to_string(r.ngroups);
  return s;
}

}  // namespace attnbench
