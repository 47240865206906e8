#include "harness/sweep.hpp"

#include "harness/run_defaults.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <set>

namespace attnbench {

using nlohmann::json;

std::string kv_heads_value::text() const {
  if (value > 0) return std::to_string(value);
  return divisor == 1 ? "H" : fmt::format("H/{}", divisor);
}

bool sweep_axes::empty() const {
  return variant.empty() && seq.empty() && nq.empty() && nkv.empty() && batch.empty() &&
         heads.empty() && head_dim.empty() && kv_heads.empty() && block.empty() &&
         mask.empty() && type.empty();
}

// ---- CLI lists ---------------------------------------------------------------

std::vector<std::string> split_list(std::string_view s, std::string_view what) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = s.find(',', start);
    const std::string_view item = s.substr(start, comma == std::string_view::npos ? s.npos : comma - start);
    if (item.empty()) throw input_error(fmt::format("malformed {} list '{}' (empty item)", what, s));
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::int64_t> parse_int_list(std::string_view s, std::string_view what) {
  std::vector<std::int64_t> out;
  for (const auto& item : split_list(s, what)) out.push_back(parse_positive(item, what));
  return out;
}

std::vector<mask_spec> parse_mask_list(std::string_view s) {
  const auto items = split_list(s, "mask");
  std::vector<mask_spec> out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string m = items[i];
    // "local:L" is followed by ",R" (and maybe "+global:G"): glue the next item back on.
    const auto local = m.find("local:");
    if (local != std::string::npos && m.find(',', local) == std::string::npos && i + 1 < items.size())
      m += "," + items[++i];
    out.push_back(parse_mask(m));
  }
  return out;
}

tile_shape parse_block(std::string_view s) {
  const auto x = s.find('x');
  if (x == std::string_view::npos)
    throw input_error(fmt::format("bad block '{}' (expected BrxBc, e.g. 64x64)", s));
  return {parse_positive(s.substr(0, x), "block Br"), parse_positive(s.substr(x + 1), "block Bc")};
}

std::vector<tile_shape> parse_block_list(std::string_view s) {
  std::vector<tile_shape> out;
  for (const auto& item : split_list(s, "block")) out.push_back(parse_block(item));
  return out;
}

static kv_heads_value parse_kv_heads(std::string_view s) {
  if (s == "H") return {0, 1};
  if (s.starts_with("H/")) return {0, parse_positive(s.substr(2), "kv-heads divisor")};
  return {parse_positive(s, "kv-heads"), 0};
}

std::vector<kv_heads_value> parse_kv_heads_list(std::string_view s) {
  std::vector<kv_heads_value> out;
  for (const auto& item : split_list(s, "kv-heads")) out.push_back(parse_kv_heads(item));
  return out;
}

std::vector<dtype> parse_dtype_list(std::string_view s) {
  std::vector<dtype> out;
  for (const auto& item : split_list(s, "dtype")) out.push_back(parse_dtype(item));
  return out;
}

// ---- sweep files -----------------------------------------------------------------

namespace {

std::string axis_key(std::string k) {
  std::replace(k.begin(), k.end(), '_', '-');
  return k;
}

// A JSON axis value: a list or a single value; items are numbers or strings.
std::vector<std::string> json_items(const json& v, const std::string& where) {
  std::vector<std::string> out;
  auto one = [&](const json& x) {
    if (x.is_number_integer()) out.push_back(std::to_string(x.get<std::int64_t>()));
    else if (x.is_string()) out.push_back(x.get<std::string>());
    else throw input_error(fmt::format("{}: expected numbers or strings, got {}", where, x.dump()));
  };
  if (v.is_array()) {
    if (v.empty()) throw input_error(fmt::format("{}: empty list", where));
    for (const auto& x : v) one(x);
  } else {
    one(v);
  }
  return out;
}

void set_axis(sweep_axes& a, const std::string& key, const std::vector<std::string>& items,
              const std::string& where) {
  auto ints = [&](std::vector<std::int64_t>& dst) {
    for (const auto& s : items) dst.push_back(parse_positive(s, key));
  };
  if (key == "variant") a.variant = items;
  else if (key == "seq") ints(a.seq);
  else if (key == "nq") ints(a.nq);
  else if (key == "nkv") ints(a.nkv);
  else if (key == "batch") ints(a.batch);
  else if (key == "heads") ints(a.heads);
  else if (key == "head-dim") ints(a.head_dim);
  else if (key == "kv-heads") for (const auto& s : items) a.kv_heads.push_back(parse_kv_heads(s));
  else if (key == "block") for (const auto& s : items) a.block.push_back(parse_block(s));
  else if (key == "mask") for (const auto& s : items) a.mask.push_back(parse_mask(s));
  else if (key == "dtype") for (const auto& s : items) a.type.push_back(parse_dtype(s));
  else throw input_error(fmt::format("{}: unknown axis '{}'", where, key));
}

}  // namespace

sweep_spec parse_sweep_json(const json& j, const std::string& source) {
  sweep_spec s;
  s.name = source;
  const json* groups = &j;
  if (j.is_object()) {
    if (j.contains("name")) {
      if (!j["name"].is_string()) throw input_error(fmt::format("{}: 'name' must be a string", source));
      s.name = j["name"].get<std::string>();
    }
    if (!j.contains("groups")) throw input_error(fmt::format("{}: no 'groups' list", source));
    groups = &j["groups"];
  }
  if (!groups->is_array() || groups->empty())
    throw input_error(fmt::format("{}: expected a non-empty list of groups", source));
  int index = 0;
  for (const auto& g : *groups) {
    if (!g.is_object()) throw input_error(fmt::format("{}: group {} is not an object", source, index));
    sweep_group out;
    out.name = fmt::format("group{}", index);
    for (const auto& [k, v] : g.items()) {
      if (k == "name") {
        if (!v.is_string()) throw input_error(fmt::format("{}: group name must be a string", source));
        out.name = v.get<std::string>();
        continue;
      }
      const std::string where = fmt::format("{}: group '{}' axis '{}'", source, out.name, k);
      set_axis(out.axes, axis_key(k), json_items(v, where), where);
    }
    s.groups.push_back(std::move(out));
    ++index;
  }
  return s;
}

sweep_spec load_sweep_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw input_error(fmt::format("cannot read sweep file '{}'", path));
  json j;
  try {
    j = json::parse(f);
  } catch (const json::exception& e) {
    throw input_error(fmt::format("sweep file '{}' is not valid JSON: {}", path, e.what()));
  }
  return parse_sweep_json(j, path);
}

nlohmann::ordered_json to_json(const sweep_spec& s) {
  using ojson = nlohmann::ordered_json;
  ojson groups = ojson::array();
  for (const auto& g : s.groups) {
    ojson o;
    o["name"] = g.name;
    const auto& a = g.axes;
    if (!a.variant.empty()) o["variant"] = a.variant;
    if (!a.seq.empty()) o["seq"] = a.seq;
    if (!a.nq.empty()) o["nq"] = a.nq;
    if (!a.nkv.empty()) o["nkv"] = a.nkv;
    if (!a.batch.empty()) o["batch"] = a.batch;
    if (!a.heads.empty()) o["heads"] = a.heads;
    if (!a.kv_heads.empty()) {
      ojson l = ojson::array();
      for (const auto& k : a.kv_heads) {
        if (k.value > 0) l.push_back(k.value);
        else l.push_back(k.text());
      }
      o["kv-heads"] = l;
    }
    if (!a.head_dim.empty()) o["head-dim"] = a.head_dim;
    if (!a.block.empty()) {
      ojson l = ojson::array();
      for (const auto& b : a.block) l.push_back(fmt::format("{}x{}", b.br, b.bc));
      o["block"] = l;
    }
    if (!a.mask.empty()) {
      ojson l = ojson::array();
      for (const auto& m : a.mask) l.push_back(to_string(m));
      o["mask"] = l;
    }
    if (!a.type.empty()) {
      ojson l = ojson::array();
      for (auto t : a.type) l.push_back(std::string(to_string(t)));
      o["dtype"] = l;
    }
    groups.push_back(o);
  }
  ojson out;
  out["name"] = s.name;
  out["groups"] = groups;
  return out;
}

void apply_overrides(sweep_spec& s, const sweep_axes& o) {
  for (auto& g : s.groups) {
    auto& a = g.axes;
    if (!o.variant.empty()) a.variant = o.variant;
    if (!o.seq.empty()) {
      a.seq = o.seq;
      a.nq.clear();
      a.nkv.clear();
    }
    if (!o.nq.empty()) a.nq = o.nq;
    if (!o.nkv.empty()) a.nkv = o.nkv;
    if (!o.batch.empty()) a.batch = o.batch;
    if (!o.heads.empty()) a.heads = o.heads;
    if (!o.head_dim.empty()) a.head_dim = o.head_dim;
    if (!o.kv_heads.empty()) a.kv_heads = o.kv_heads;
    if (!o.block.empty()) a.block = o.block;
    if (!o.mask.empty()) a.mask = o.mask;
    if (!o.type.empty()) a.type = o.type;
  }
}

// ---- expansion ---------------------------------------------------------------------

namespace {

template <class T>
std::vector<T> or_default(const std::vector<T>& v, T def) {
  return v.empty() ? std::vector<T>{def} : v;
}

}  // namespace

std::vector<configuration> expand(const sweep_spec& s, const std::vector<variant>& rows,
                                  backend_kind backend) {
  std::vector<configuration> out;
  std::set<std::string> seen;
  const std::vector<dtype> default_types = defaults_for(backend).dtypes;
  for (const auto& g : s.groups) {
    const auto& a = g.axes;
    // Variants of this backend, in the group's order (registry order by default).
    std::vector<const variant*> vs;
    if (a.variant.empty()) {
      for (const auto& r : rows)
        if (r.backend == backend) vs.push_back(&r);
    } else {
      for (const auto& name : a.variant) {
        bool known = false;
        const variant* hit = nullptr;
        for (const auto& r : rows) {
          known |= r.name == name;
          if (r.name == name && r.backend == backend) hit = &r;
        }
        if (!known) {
          std::set<std::string> names;
          for (const auto& r : rows) names.insert(r.name);
          throw input_error(fmt::format("unknown variant '{}' (known: {})", name,
                                        fmt::join(names, ", ")));
        }
        if (hit) vs.push_back(hit);
      }
    }
    // (Nq, Nkv) pairs: seq alone pairs them; nq/nkv make a product.
    std::vector<std::pair<std::int64_t, std::int64_t>> lengths;
    const auto seq = or_default<std::int64_t>(a.seq, 1024);
    if (a.nq.empty() && a.nkv.empty()) {
      for (auto n : seq) lengths.emplace_back(n, n);
    } else {
      for (auto nq : a.nq.empty() ? seq : a.nq)
        for (auto nkv : a.nkv.empty() ? seq : a.nkv) lengths.emplace_back(nq, nkv);
    }
    const auto types = a.type.empty() ? default_types : a.type;
    for (auto t : types)
      for (auto b : or_default<std::int64_t>(a.batch, 1))
        for (auto h : or_default<std::int64_t>(a.heads, 8))
          for (const auto& kv : or_default<kv_heads_value>(a.kv_heads, {0, 1}))
            for (auto d : or_default<std::int64_t>(a.head_dim, 64))
              for (auto [nq, nkv] : lengths)
                for (const auto& m : or_default<mask_spec>(a.mask, mask_spec{}))
                  for (const auto& blk : or_default<tile_shape>(a.block, tile_shape{})) {
                    problem p;
                    p.B = b;
                    p.H = h;
                    if (kv.value > 0) {
                      p.Hkv = kv.value;
                    } else {
                      if (h % kv.divisor != 0)
                        throw input_error(fmt::format("kv-heads '{}' with H={}: H is not divisible by {}",
                                                      kv.text(), h, kv.divisor));
                      p.Hkv = h / kv.divisor;
                    }
                    p.Nq = nq;
                    p.Nkv = nkv;
                    p.d = d;
                    p.type = t;
                    p.mask = m;
                    p.Br = blk.br;
                    p.Bc = blk.bc;
                    try {
                      validate(p);
                    } catch (const input_error& e) {
                      throw input_error(fmt::format("group '{}': {}", g.name, e.what()));
                    }
                    for (const variant* v : vs) {
                      const problem rp = v->resolved(p);
                      configuration c{v, rp, g.name, v->benchmark_name(rp), {}};
                      if (!seen.insert(c.name).second) continue;
                      c.sup = v->supports(rp);
                      out.push_back(std::move(c));
                    }
                  }
  }
  return out;
}

shard_spec parse_shard(std::string_view s) {
  const auto slash = s.find('/');
  if (slash == std::string_view::npos)
    throw input_error(fmt::format("bad shard '{}' (expected i/n with 0 <= i < n)", s));
  shard_spec sh;
  sh.count = parse_positive(s.substr(slash + 1), "shard count");
  const std::string_view i = s.substr(0, slash);
  sh.index = i == "0" ? 0 : parse_positive(i, "shard index");
  if (sh.index >= sh.count)
    throw input_error(fmt::format("bad shard '{}' (expected i/n with 0 <= i < n)", s));
  return sh;
}

std::vector<configuration> select(std::vector<configuration> all, const std::string& filter,
                                  shard_spec shard) {
  std::optional<std::regex> re;
  if (!filter.empty()) {
    try {
      re.emplace(filter, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
      throw input_error(fmt::format("bad --filter regex '{}'", filter));
    }
  }
  std::vector<configuration> kept;
  for (auto& c : all)
    if (!re || std::regex_search(c.name, *re)) kept.push_back(std::move(c));
  std::vector<configuration> out;
  for (std::size_t i = 0; i < kept.size(); ++i)
    if (static_cast<std::int64_t>(i % shard.count) == shard.index) out.push_back(std::move(kept[i]));
  return out;
}

}  // namespace attnbench
