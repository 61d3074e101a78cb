// TOML reading and validation of the scheduler config, with toml++ (as the agent's
// config reader uses it).
#include "govern/sched/tenant_config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "govern/hookcore/memory_limits.h"
#include "govern/protocol/messages.h"

namespace eacgm::govern::sched {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  Error fail(const toml::source_region& where, const std::string& what) const {
    return make_error(ErrorKind::kUsage,
                      fmt::format("{}:{}:{}: {}", source_, where.begin.line, where.begin.column, what));
  }

  Status check_keys(const toml::table& t, std::initializer_list<std::string_view> allowed,
                    std::string_view context) const {
    for (const auto& [key, node] : t) {
      bool known = false;
      for (auto a : allowed) known |= key.str() == a;
      if (!known) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        return fail(key.source(),
                    fmt::format("unknown key \"{}\" in {} (known: {})", key.str(), context, list));
      }
    }
    return {};
  }

  Status number(const toml::table& t, std::string_view key, double lo, double hi, double* out) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return {};
    std::optional<double> v = n->value<double>();
    if (!v) return fail(n->source(), fmt::format("{} must be a number", key));
    if (*v < lo || *v > hi)
      return fail(n->source(), fmt::format("{} must be between {} and {}, not {}", key, lo, hi, *v));
    *out = *v;
    return {};
  }

  Status string(const toml::table& t, std::string_view key, std::string* out) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return {};
    std::optional<std::string> v = n->value<std::string>();
    if (!v) return fail(n->source(), fmt::format("{} must be a string", key));
    *out = *v;
    return {};
  }

 private:
  std::string_view source_;
};

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > protocol::kMaxNameLength) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
  }
  return true;
}

Status read_tenant(const Reader& r, const toml::table& t, SchedulerConfig* cfg) {
  if (auto s = r.check_keys(t, {"name", "request", "limit", "memory_limit", "uids", "secret"}, "[[tenant]]");
      !s)
    return s;
  TenantConfig tenant;
  if (auto s = r.string(t, "name", &tenant.name); !s) return s;
  if (!valid_name(tenant.name))
    return r.fail(t.source(), fmt::format("tenant name \"{}\" must be 1-64 letters, digits, '-', '_' or '.'",
                                          tenant.name));
  for (const TenantConfig& other : cfg->tenants) {
    if (other.name == tenant.name)
      return r.fail(t.source(), fmt::format("tenant \"{}\" is defined twice", tenant.name));
  }
  if (auto s = r.number(t, "request", 0, 1, &tenant.request); !s) return s;
  tenant.limit = 1;
  if (auto s = r.number(t, "limit", 0.01, 1, &tenant.limit); !s) return s;
  if (tenant.request > tenant.limit)
    return r.fail(t.source(), fmt::format("tenant \"{}\": request {} is above its limit {}", tenant.name,
                                          tenant.request, tenant.limit));
  if (const toml::node* m = t.get("memory_limit")) {
    if (auto i = m->value<std::int64_t>(); i && *i >= 0 && m->is_integer()) {
      tenant.memory_limit = static_cast<std::uint64_t>(*i);
    } else if (auto text = m->value<std::string>(); text && parse_memory_size(*text, &tenant.memory_limit)) {
    } else {
      return r.fail(m->source(), "memory_limit must be a size such as \"4GiB\" or \"4096m\" (0: no limit)");
    }
  }
  if (const toml::node* u = t.get("uids")) {
    const toml::array* a = u->as_array();
    if (a == nullptr) return r.fail(u->source(), "uids must be an array of user ids, e.g. [1000, 1001]");
    for (const toml::node& e : *a) {
      auto id = e.value<std::int64_t>();
      if (!id || *id < 0 || *id > 0xffffffffll)
        return r.fail(e.source(), "uids must hold user ids (0..4294967295)");
      tenant.uids.push_back(static_cast<std::uint32_t>(*id));
    }
  }
  if (auto s = r.string(t, "secret", &tenant.secret); !s) return s;
  if (tenant.secret.size() > protocol::kMaxSecretLength)
    return r.fail(t.source(), "secret must be at most 128 characters");
  for (char c : tenant.secret) {
    if (c < 0x20 || c > 0x7e) return r.fail(t.source(), "secret must be printable ASCII");
  }
  cfg->tenants.push_back(std::move(tenant));
  return {};
}

}  // namespace

Result<SchedulerConfig> parse_scheduler_config(std::string_view text, std::string_view source_name) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    return make_error(ErrorKind::kUsage, fmt::format("{}:{}:{}: {}", source_name, e.source().begin.line,
                                                     e.source().begin.column, e.description()));
  }
  Reader r(source_name);
  SchedulerConfig cfg;
  if (auto s = r.check_keys(root, {"scheduler", "tenant"}, "the file"); !s) return std::move(s).take_error();
  if (const toml::node* n = root.get("scheduler")) {
    const toml::table* t = n->as_table();
    if (t == nullptr) return r.fail(n->source(), "[scheduler] must be a table");
    if (auto s = r.check_keys(
            *t, {"gpus", "socket", "tcp", "metrics", "window_seconds", "max_slice_ms", "min_slice_ms"},
            "[scheduler]");
        !s)
      return std::move(s).take_error();
    double gpus = cfg.gpus, max_slice = cfg.max_slice_ms, min_slice = cfg.min_slice_ms;
    if (auto s = r.number(*t, "gpus", 1, protocol::kMaxDevice + 1, &gpus); !s)
      return std::move(s).take_error();
    if (auto s = r.number(*t, "window_seconds", 0.5, 3600, &cfg.window_seconds); !s)
      return std::move(s).take_error();
    if (auto s = r.number(*t, "max_slice_ms", 1, 10000, &max_slice); !s) return std::move(s).take_error();
    if (auto s = r.number(*t, "min_slice_ms", 1, 10000, &min_slice); !s) return std::move(s).take_error();
    if (min_slice > max_slice) return r.fail(t->source(), "min_slice_ms must not be above max_slice_ms");
    cfg.gpus = static_cast<int>(gpus);
    cfg.max_slice_ms = static_cast<std::uint32_t>(max_slice);
    cfg.min_slice_ms = static_cast<std::uint32_t>(min_slice);
    if (auto s = r.string(*t, "socket", &cfg.socket); !s) return std::move(s).take_error();
    if (auto s = r.string(*t, "tcp", &cfg.tcp); !s) return std::move(s).take_error();
    if (auto s = r.string(*t, "metrics", &cfg.metrics); !s) return std::move(s).take_error();
  }
  if (const toml::node* n = root.get("tenant")) {
    const toml::array* a = n->as_array();
    if (a == nullptr) return r.fail(n->source(), "tenants are written [[tenant]] (an array of tables)");
    for (const toml::node& e : *a) {
      const toml::table* t = e.as_table();
      if (t == nullptr) return r.fail(e.source(), "each [[tenant]] must be a table");
      if (auto s = read_tenant(r, *t, &cfg); !s) return std::move(s).take_error();
    }
  }
  double requested = 0;
  for (const TenantConfig& t : cfg.tenants) requested += t.request;
  if (requested > 1.0 + 1e-9)
    return make_error(
        ErrorKind::kUsage,
        fmt::format("{}: the tenants' requests add up to {:.2f}; they are shares of one GPU's time "
                    "and must add up to at most 1",
                    source_name, requested));
  return cfg;
}

Result<SchedulerConfig> load_scheduler_config(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return make_error(ErrorKind::kUsage,
                      fmt::format("cannot read scheduler config {}: {}", path, std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_scheduler_config(ss.str(), path);
}

}  // namespace eacgm::govern::sched
