// The registry of built-in catalogs and name-based spec selection.
#include "probe/catalog.h"

#include <fmt/format.h>

#include <set>

#include "probe/always_on.h"

namespace eacgm::probe {

const std::vector<Catalog>& builtin_catalogs() {
  static const std::vector<Catalog> catalogs = [] {
    std::vector<Catalog> all = {cuda_runtime_catalog(), cuda_driver_catalog(), nccl_catalog(),
                                python_catalog(), torch_catalog()};
    for (auto& c : all) {
      for (auto& s : c.specs) s.always_on = always_on_role(s);
    }
    return all;
  }();
  return catalogs;
}

// python and torch fire on every interpreted call or op binding, so they are opt-in.
std::vector<std::string> default_catalog_names() { return {"cuda", "cuda_driver", "nccl"}; }

Result<std::vector<ProbeSpec>> select_specs(const std::vector<std::string>& names,
                                            const std::vector<ProbeSpec>& user_specs) {
  std::vector<ProbeSpec> out;
  std::set<std::string> taken;
  auto add = [&](const ProbeSpec& s) {
    if (taken.insert(s.name).second) out.push_back(s);
  };
  std::vector<std::string> unknown;
  for (const auto& name : names) {
    bool found = false;
    for (const auto& c : builtin_catalogs()) {
      if (c.name == name) {
        for (const auto& s : c.specs) add(s);
        found = true;
      }
      for (const auto& s : c.specs) {
        if (s.name == name) {
          add(s);
          found = true;
        }
      }
    }
    for (const auto& s : user_specs) {
      if (s.name == name || s.domain == name) {  // a user spec by name, or all of its domain
        add(s);
        found = true;
      }
    }
    if (!found) unknown.push_back(name);
  }
  if (!unknown.empty()) {
    std::string known;
    for (const auto& c : builtin_catalogs()) known += (known.empty() ? "" : ", ") + c.name;
    return make_error(
        fmt::format("unknown probe {} '{}' (catalogs: {}; run `eacgm probes` for every probe name)",
                    unknown.size() == 1 ? "name" : "names", fmt::join(unknown, "', '"), known));
  }
  return out;
}

}  // namespace eacgm::probe
