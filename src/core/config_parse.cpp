// TOML config reader: the schema (docs/config.md), its ranges and the mapping of each
// probe-spec rule violation back to the line that caused it.
#include "core/config_parse.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <span>
#include <system_error>
#include <utility>
#include <vector>

#include "core/byte_size.h"
#include "core/spec_validate.h"

namespace eacgm {
namespace {

using Keys = std::span<const std::string_view>;

constexpr std::string_view kTopKeys[] = {"catalogs", "trace", "gpu",   "python",    "probe",
                                         "serve",    "hangs", "store", "kubernetes"};
constexpr std::string_view kHangsKeys[] = {"min_age_s", "hang_after_s", "in_flight"};
constexpr std::string_view kKubernetesKeys[] = {"enabled", "pod_resources_socket", "log_root", "refresh_s",
                                                "process_series"};
constexpr std::string_view kStoreKeys[] = {"url",         "node",      "interval_s", "raw_hours",
                                           "minute_days", "hour_days", "max_size",   "spool_batches"};
constexpr std::string_view kServeKeys[] = {"listen",
                                           "token_file",
                                           "max_clients",
                                           "dcgm_metrics",
                                           "max_function_series",
                                           "max_process_series",
                                           "max_histogram_series",
                                           "rescan_interval_s"};
constexpr std::string_view kTraceKeys[] = {
    "ringbuf_mib",       "wakeup_kib",    "poll_timeout_ms", "rescan_interval_s",
    "status_interval_s", "mode",          "sample_shift",    "budget",
    "calibrate",         "pinned",        "host_waits",      "duty_cycle",
    "one_layer",         "duty_fraction", "duty_switch_log", "duty_log"};
constexpr std::string_view kGpuKeys[] = {"interval_s", "sample"};
constexpr std::string_view kPythonKeys[] = {"file_filter", "sample_hz", "usdt_durations",
                                            "window_s",    "max_rows",  "max_stacks"};
constexpr std::string_view kProbeKeys[] = {"name", "domain", "library", "symbol", "pattern", "exit",
                                           "ret",  "errors", "args",    "outer",  "waits"};
constexpr std::string_view kArgKeys[] = {"name", "reg",    "stack",   "from",
                                         "kind", "format", "at_exit", "offset"};

constexpr ArgKind kAllKinds[] = {ArgKind::kRaw,      ArgKind::kU32,      ArgKind::kDerefU32,
                                 ArgKind::kDerefU64, ArgKind::kDim3,     ArgKind::kDerefDim3,
                                 ArgKind::kString,   ArgKind::kDim3Split};
constexpr ArgFormat kAllFormats[] = {ArgFormat::kUnsigned, ArgFormat::kSigned, ArgFormat::kHex};
constexpr ReturnKind kAllReturns[] = {ReturnKind::kNone, ReturnKind::kInt32, ReturnKind::kInt64,
                                      ReturnKind::kPointer};
constexpr ErrorRule kAllErrorRules[] = {ErrorRule::kNone, ErrorRule::kNonZero, ErrorRule::kNegative,
                                        ErrorRule::kMinusOne, ErrorRule::kNull};

// Files larger than this are not configs; refusing them keeps a wrong --config
// (a log, a core dump) from eating memory.
constexpr std::size_t kMaxConfigBytes = 16u << 20;

// Optimal-string-alignment distance, case-insensitive: a swapped pair of letters
// ("fromat") counts as one edit, the most common typo in key names.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  const std::size_t w = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * w);
  for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      std::size_t best =
          std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
        best = std::min(best, d[(i - 2) * w + j - 2] + 1);
      }
      d[i * w + j] = best;
    }
  }
  return d[a.size() * w + b.size()];
}

// The one candidate close enough to `word` to be what was meant; none when nothing
// is close or two candidates are equally close (a guess would mislead).
std::optional<std::string_view> closest(std::string_view word,
                                        const std::vector<std::string_view>& candidates) {
  std::optional<std::string_view> best;
  std::size_t best_d = SIZE_MAX;
  bool tie = false;
  for (std::string_view c : candidates) {
    std::size_t limit = c.size() <= 4 ? 1 : std::max<std::size_t>(2, c.size() / 3);
    std::size_t d = edit_distance(word, c);
    if (d > limit) continue;
    if (d < best_d) {
      best = c;
      best_d = d;
      tie = false;
    } else if (d == best_d) {
      tie = true;
    }
  }
  if (tie) return std::nullopt;
  return best;
}

std::string join(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::string_view w : words) {
    if (!out.empty()) out += ", ";
    out += w;
  }
  return out;
}

std::string_view type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

bool is_power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Walks the parsed document; the first problem found becomes the error.
class ConfigReader {
 public:
  explicit ConfigReader(std::string_view source_name) : source_(source_name) {}

  Result<Config> read(const toml::table& root) {
    Config config;
    if (auto s = check_keys(root, kTopKeys, ""); !s) return std::move(s).take_error();
    if (auto s = read_catalogs(root, config.catalogs); !s) return std::move(s).take_error();
    if (auto s = read_trace(root, config.trace); !s) return std::move(s).take_error();
    if (auto s = read_gpu(root, config.gpu); !s) return std::move(s).take_error();
    if (auto s = read_python(root, config.python); !s) return std::move(s).take_error();
    if (auto s = read_serve(root, config.serve); !s) return std::move(s).take_error();
    if (auto s = read_hangs(root, config.hangs); !s) return std::move(s).take_error();
    if (auto s = read_store(root, config.store); !s) return std::move(s).take_error();
    if (auto s = read_kubernetes(root, config.kubernetes); !s) return std::move(s).take_error();
    if (auto s = read_probes(root, config.probes); !s) return std::move(s).take_error();
    return config;
  }

 private:
  Error fail(const toml::source_region& where, std::string_view context, std::string_view message) const {
    std::string loc = where.begin.line > 0
                          ? fmt::format("{}:{}:{}", source_, where.begin.line, where.begin.column)
                          : std::string(source_);
    if (context.empty()) return make_error(fmt::format("{}: {}", loc, message));
    return make_error(fmt::format("{}: {}: {}", loc, context, message));
  }

  Status check_keys(const toml::table& table, Keys allowed, std::string_view context) const {
    std::vector<std::string_view> names(allowed.begin(), allowed.end());
    for (auto&& [key, node] : table) {
      (void)node;
      if (std::find(names.begin(), names.end(), key.str()) != names.end()) continue;
      auto guess = closest(key.str(), names);
      std::string hint = guess ? fmt::format("did you mean \"{}\"?", *guess)
                               : fmt::format("expected one of {}", join(names));
      return fail(key.source(), context, fmt::format("unknown key \"{}\" ({})", key.str(), hint));
    }
    return {};
  }

  // A sub-table such as [trace]; nullptr (keep defaults) when absent.
  Result<const toml::table*> sub_table(const toml::table& parent, std::string_view key) const {
    const toml::node* node = parent.get(key);
    if (node == nullptr) return static_cast<const toml::table*>(nullptr);
    if (const toml::table* t = node->as_table()) return t;
    return fail(node->source(), "",
                fmt::format("{} must be a table ([{}]), not {}", key, key, type_name(*node)));
  }

  Status read_integer(const toml::table& table, std::string_view key, std::string_view context,
                      std::int64_t lo, std::int64_t hi, std::uint32_t& out) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return {};
    const auto* v = node->as_integer();
    if (v == nullptr) {
      return fail(node->source(), context,
                  fmt::format("{} must be an integer, not {}", key, type_name(*node)));
    }
    if (v->get() < lo || v->get() > hi) {
      return fail(node->source(), context,
                  fmt::format("{} = {} is out of range {}..{}", key, v->get(), lo, hi));
    }
    out = static_cast<std::uint32_t>(v->get());
    return {};
  }

  // Seconds accept integers too: `interval_s = 2` means 2.0.
  Status read_number(const toml::table& table, std::string_view key, std::string_view context,
                     double& out) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return {};
    if (const auto* i = node->as_integer()) {
      out = static_cast<double>(i->get());
    } else if (const auto* f = node->as_floating_point()) {
      out = f->get();
    } else {
      return fail(node->source(), context, fmt::format("{} must be a number, not {}", key, type_name(*node)));
    }
    return {};
  }

  Status check_range(const toml::table& table, std::string_view key, std::string_view context, double value,
                     double lo, double hi) const {
    // Written as !(in range) so NaN fails too.
    if (!(value >= lo && value <= hi)) {
      return fail(table.get(key)->source(), context,
                  fmt::format("{} = {} is out of range {}..{}", key, value, lo, hi));
    }
    return {};
  }

  Status read_string(const toml::table& table, std::string_view key, std::string_view context,
                     std::string& out) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return {};
    const auto* s = node->as_string();
    if (s == nullptr) {
      return fail(node->source(), context, fmt::format("{} must be a string, not {}", key, type_name(*node)));
    }
    out = s->get();
    return {};
  }

  Status read_bool(const toml::table& table, std::string_view key, std::string_view context,
                   bool& out) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return {};
    const auto* b = node->as_boolean();
    if (b == nullptr) {
      return fail(node->source(), context,
                  fmt::format("{} must be true or false, not {}", key, type_name(*node)));
    }
    out = b->get();
    return {};
  }

  // A string naming one value of an enum, e.g. kind = "deref_u64".
  template <typename Enum, std::size_t N, typename NameFn>
  Status read_enum(const toml::table& table, std::string_view key, std::string_view context,
                   const Enum (&values)[N], NameFn name_of, Enum& out) const {
    std::string text;
    if (auto s = read_string(table, key, context, text); !s) return s;
    const toml::node* node = table.get(key);
    if (node == nullptr) return {};
    std::vector<std::string_view> names;
    for (Enum v : values) {
      if (name_of(v) == text) {
        out = v;
        return {};
      }
      names.push_back(name_of(v));
    }
    auto guess = closest(text, names);
    std::string hint = guess ? fmt::format("did you mean \"{}\"? expected one of {}", *guess, join(names))
                             : fmt::format("expected one of {}", join(names));
    return fail(node->source(), context, fmt::format("unknown {} \"{}\" ({})", key, text, hint));
  }

  Status read_catalogs(const toml::table& root, std::vector<std::string>& out) const {
    const toml::node* node = root.get("catalogs");
    if (node == nullptr) return {};
    const toml::array* arr = node->as_array();
    if (arr == nullptr) {
      return fail(
          node->source(), "",
          fmt::format("catalogs must be an array of strings such as [\"cuda\"], not {}", type_name(*node)));
    }
    if (arr->empty()) {
      // An empty list would read as "no catalogs" but Config treats it as "all";
      // make the user pick one meaning explicitly.
      return fail(node->source(), "",
                  "catalogs is empty; list the catalogs to enable, or remove the key to "
                  "enable all built-in catalogs");
    }
    for (const toml::node& item : *arr) {
      const auto* s = item.as_string();
      if (s == nullptr) {
        return fail(item.source(), "",
                    fmt::format("catalogs entries must be strings, not {}", type_name(item)));
      }
      if (s->get().empty()) {
        return fail(item.source(), "", "catalogs has an empty name; use a catalog name such as \"cuda\"");
      }
      if (std::find(out.begin(), out.end(), s->get()) != out.end()) {
        return fail(item.source(), "", fmt::format("catalog \"{}\" is listed twice", s->get()));
      }
      out.push_back(s->get());
    }
    return {};
  }

  // [trace] pinned: distinct, non-empty function or spec names.
  Status read_pinned(const toml::table& table, std::string_view ctx, std::vector<std::string>& out) const {
    const toml::node* node = table.get("pinned");
    if (node == nullptr) return {};
    const toml::array* arr = node->as_array();
    if (arr == nullptr) {
      return fail(node->source(), ctx,
                  fmt::format("pinned must be an array of probe names such as [\"cuLaunchKernel\"], not {}",
                              type_name(*node)));
    }
    for (const toml::node& item : *arr) {
      const auto* s = item.as_string();
      if (s == nullptr || s->get().empty()) {
        return fail(item.source(), ctx,
                    "pinned entries must be non-empty probe names such as \"cuLaunchKernel\"");
      }
      if (std::find(out.begin(), out.end(), s->get()) != out.end()) {
        return fail(item.source(), ctx, fmt::format("probe \"{}\" is pinned twice", s->get()));
      }
      out.push_back(s->get());
    }
    return {};
  }

  Status read_trace(const toml::table& root, TraceConfig& trace) const {
    auto t = sub_table(root, "trace");
    if (!t) return std::move(t).take_error();
    const toml::table* table = *t;
    if (table == nullptr) return {};
    constexpr std::string_view ctx = "[trace]";
    if (auto s = check_keys(*table, kTraceKeys, ctx); !s) return s;

    if (const toml::node* m = table->get("mode")) {
      const auto text = m->value<std::string>();
      const auto mode = text ? parse_trace_mode(*text) : std::nullopt;
      if (!mode)
        return fail(m->source(), ctx, "mode must be \"per-call\" or \"always-on\" (docs/overhead.md)");
      trace.mode = *mode;
    }
    if (auto s = read_integer(*table, "sample_shift", ctx, 0, 20, trace.sample_shift); !s) {
      return s;
    }
    if (auto s = read_number(*table, "budget", ctx, trace.budget); !s) return s;
    if (table->get("budget") != nullptr) {
      if (auto s = check_range(*table, "budget", ctx, trace.budget, 0.0, 1.0); !s) return s;
    }
    if (auto s = read_bool(*table, "calibrate", ctx, trace.calibrate); !s) return s;
    if (auto s = read_bool(*table, "duty_cycle", ctx, trace.duty_cycle); !s) return s;
    if (table->contains("duty_fraction")) {
      double fraction = 0;
      if (auto s = read_number(*table, "duty_fraction", ctx, fraction); !s) return s;
      // Written as !(in range) so NaN fails too; at 0 the probes would never count.
      if (!(fraction > 0.0 && fraction <= 1.0)) {
        return fail(table->get("duty_fraction")->source(), ctx,
                    fmt::format("duty_fraction = {} is out of range: use a fraction in (0, 1], such as 0.5",
                                fraction));
      }
      trace.duty_fraction = fraction;
    }
    if (auto s = read_string(*table, "duty_switch_log", ctx, trace.duty_switch_log); !s) return s;
    if (auto s = read_string(*table, "duty_log", ctx, trace.duty_log); !s) return s;
    if (auto s = read_bool(*table, "one_layer", ctx, trace.one_layer); !s) return s;
    if (auto s = read_pinned(*table, ctx, trace.pinned); !s) return s;
    if (table->get("host_waits") != nullptr) {
      bool on = true;
      if (auto s = read_bool(*table, "host_waits", ctx, on); !s) return s;
      trace.host_waits = on;
    }
    if (auto s = read_integer(*table, "ringbuf_mib", ctx, 1, 1024, trace.ringbuf_mib); !s) {
      return s;
    }
    // The kernel requires the BPF ring buffer size to be a power-of-two number of pages.
    if (!is_power_of_two(trace.ringbuf_mib)) {
      return fail(
          table->get("ringbuf_mib")->source(), ctx,
          fmt::format("ringbuf_mib = {} is not a power of two (use 1, 2, 4, ... 1024)", trace.ringbuf_mib));
    }
    if (auto s = read_integer(*table, "wakeup_kib", ctx, 0, INT64_MAX, trace.wakeup_kib); !s) {
      return s;
    }
    // Waking the reader only after more than half the buffer is queued leaves too
    // little room for the records that arrive while it drains.
    const std::uint32_t max_wakeup = trace.ringbuf_mib * 1024 / 2;
    if (trace.wakeup_kib > max_wakeup) {
      const toml::node* node = table->get("wakeup_kib");
      return fail(node != nullptr ? node->source() : table->source(), ctx,
                  fmt::format("wakeup_kib = {} exceeds half the ring buffer (ringbuf_mib = {} "
                              "allows at most {}); lower wakeup_kib or raise ringbuf_mib",
                              trace.wakeup_kib, trace.ringbuf_mib, max_wakeup));
    }
    if (auto s = read_integer(*table, "poll_timeout_ms", ctx, 1, 10000, trace.poll_timeout_ms); !s) {
      return s;
    }
    if (auto s = read_number(*table, "rescan_interval_s", ctx, trace.rescan_interval_s); !s) {
      return s;
    }
    if (table->contains("rescan_interval_s")) {
      if (auto s = check_range(*table, "rescan_interval_s", ctx, trace.rescan_interval_s, 0.05, 3600); !s) {
        return s;
      }
    }
    if (auto s = read_number(*table, "status_interval_s", ctx, trace.status_interval_s); !s) {
      return s;
    }
    if (table->contains("status_interval_s") && trace.status_interval_s != 0.0 &&
        !(trace.status_interval_s >= 0.1 && trace.status_interval_s <= 3600)) {
      return fail(table->get("status_interval_s")->source(), ctx,
                  fmt::format("status_interval_s = {} is out of range: use 0 (off) or "
                              "0.1..3600",
                              trace.status_interval_s));
    }
    return {};
  }

  Status read_gpu(const toml::table& root, GpuConfig& gpu) const {
    auto t = sub_table(root, "gpu");
    if (!t) return std::move(t).take_error();
    const toml::table* table = *t;
    if (table == nullptr) return {};
    constexpr std::string_view ctx = "[gpu]";
    if (auto s = check_keys(*table, kGpuKeys, ctx); !s) return s;
    if (auto s = read_bool(*table, "sample", ctx, gpu.sample); !s) return s;
    if (auto s = read_number(*table, "interval_s", ctx, gpu.interval_s); !s) return s;
    if (table->contains("interval_s")) {
      return check_range(*table, "interval_s", ctx, gpu.interval_s, 0.01, 3600);
    }
    return {};
  }

  Status read_serve(const toml::table& root, ServeConfig& serve) const {
    auto t = sub_table(root, "serve");
    if (!t) return std::move(t).take_error();
    const toml::table* table = *t;
    if (table == nullptr) return {};
    constexpr std::string_view ctx = "[serve]";
    if (auto s = check_keys(*table, kServeKeys, ctx); !s) return s;
    if (auto s = read_string(*table, "listen", ctx, serve.listen); !s) return s;
    if (auto s = read_string(*table, "token_file", ctx, serve.token_file); !s) return s;
    if (auto s = read_integer(*table, "max_clients", ctx, 1, 256, serve.max_clients); !s) return s;
    if (auto s = read_bool(*table, "dcgm_metrics", ctx, serve.dcgm_metrics); !s) return s;
    if (auto s = read_integer(*table, "max_function_series", ctx, 1, 100000, serve.max_function_series); !s) {
      return s;
    }
    if (auto s = read_integer(*table, "max_histogram_series", ctx, 0, 100000, serve.max_histogram_series);
        !s) {
      return s;
    }
    if (auto s = read_number(*table, "rescan_interval_s", ctx, serve.rescan_interval_s); !s) return s;
    if (table->contains("rescan_interval_s")) {
      if (auto s = check_range(*table, "rescan_interval_s", ctx, serve.rescan_interval_s, 0.1, 3600); !s)
        return s;
    }
    return read_integer(*table, "max_process_series", ctx, 1, 100000, serve.max_process_series);
  }

  Status read_hangs(const toml::table& root, HangsConfig& hangs) const {
    auto t = sub_table(root, "hangs");
    if (!t) return std::move(t).take_error();
    const toml::table* table = *t;
    if (table == nullptr) return {};
    constexpr std::string_view ctx = "[hangs]";
    if (auto s = check_keys(*table, kHangsKeys, ctx); !s) return s;
    if (auto s = read_number(*table, "min_age_s", ctx, hangs.min_age_s); !s) return s;
    if (table->contains("min_age_s")) {
      if (auto s = check_range(*table, "min_age_s", ctx, hangs.min_age_s, 0, 86400); !s) return s;
    }
    if (auto s = read_number(*table, "hang_after_s", ctx, hangs.hang_after_s); !s) return s;
    if (table->contains("hang_after_s")) {
      if (auto s = check_range(*table, "hang_after_s", ctx, hangs.hang_after_s, 0, 864000); !s) return s;
    }
    if (auto s = read_bool(*table, "in_flight", ctx, hangs.in_flight); !s) return s;
    return {};
  }

  Status read_kubernetes(const toml::table& root, KubernetesConfig& k) const {
    auto t = sub_table(root, "kubernetes");
    if (!t) return std::move(t).take_error();
    const toml::table* table = *t;
    if (table == nullptr) return {};
    constexpr std::string_view ctx = "[kubernetes]";
    if (auto s = check_keys(*table, kKubernetesKeys, ctx); !s) return s;
    if (auto s = read_bool(*table, "enabled", ctx, k.enabled); !s) return s;
    if (auto s = read_string(*table, "pod_resources_socket", ctx, k.pod_resources_socket); !s) return s;
    if (auto s = read_string(*table, "log_root", ctx, k.log_root); !s) return s;
    if (auto s = read_number(*table, "refresh_s", ctx, k.refresh_s); !s) return s;
    if (table->contains("refresh_s")) {
      if (auto s = check_range(*table, "refresh_s", ctx, k.refresh_s, 1, 86400); !s) return s;
    }
    if (auto s = read_string(*table, "process_series", ctx, k.process_series); !s) return s;
    if (k.process_series != "auto" && k.process_series != "pid") {
      return fail(table->get("process_series")->source(), ctx,
                  fmt::format("process_series must be \"auto\" or \"pid\", not \"{}\"", k.process_series));
    }
    for (const auto* key : {"pod_resources_socket", "log_root"}) {
      const std::string& v = std::string_view(key) == "log_root" ? k.log_root : k.pod_resources_socket;
      if (v.empty() || v[0] != '/') {
        return fail(table->get(key)->source(), ctx, fmt::format("{} must be an absolute path", key));
      }
    }
    return {};
  }

  Status read_store(const toml::table& root, StoreConfig& store) const {
    auto t = sub_table(root, "store");
    if (!t) return std::move(t).take_error();
    const toml::table* table = *t;
    if (table == nullptr) return {};
    constexpr std::string_view ctx = "[store]";
    if (auto s = check_keys(*table, kStoreKeys, ctx); !s) return s;
    if (auto s = read_string(*table, "url", ctx, store.url); !s) return s;
    if (auto s = read_string(*table, "node", ctx, store.node); !s) return s;
    struct Bounded {
      std::string_view key;
      double& value;
      double lo, hi;
    };
    for (const Bounded& b : {Bounded{"interval_s", store.interval_s, 1, 600},
                             Bounded{"raw_hours", store.raw_hours, 0.1, 24.0 * 366},
                             Bounded{"minute_days", store.minute_days, 0.01, 3660},
                             Bounded{"hour_days", store.hour_days, 0.01, 36600}}) {
      if (auto s = read_number(*table, b.key, ctx, b.value); !s) return s;
      if (table->contains(b.key)) {
        if (auto s = check_range(*table, b.key, ctx, b.value, b.lo, b.hi); !s) return s;
      }
    }
    if (const auto* node = table->get("max_size")) {
      const auto* text = node->as_string();
      auto bytes = text ? parse_byte_size(text->get()) : Result<std::uint64_t>(make_error("not a string"));
      if (!bytes) {
        return fail(
            node->source(), ctx,
            "max_size must be a size such as \"1GiB\" or \"500MB\" (\"0\" for no cap): " + bytes.error());
      }
      store.max_bytes = *bytes;
    }
    return read_integer(*table, "spool_batches", ctx, 1, 100000, store.spool_batches);
  }

  Status read_python(const toml::table& root, PythonConfig& python) const {
    auto t = sub_table(root, "python");
    if (!t) return std::move(t).take_error();
    const toml::table* table = *t;
    if (table == nullptr) return {};
    constexpr std::string_view ctx = "[python]";
    if (auto s = check_keys(*table, kPythonKeys, ctx); !s) return s;
    if (auto s = read_string(*table, "file_filter", ctx, python.file_filter); !s) return s;
    if (auto s = read_integer(*table, "sample_hz", ctx, 0, 10000, python.sample_hz); !s) return s;
    if (auto s = read_bool(*table, "usdt_durations", ctx, python.usdt_durations); !s) return s;
    if (auto s = read_integer(*table, "window_s", ctx, 10, 86400, python.window_s); !s) return s;
    if (auto s = read_integer(*table, "max_rows", ctx, 100, 10000000, python.max_rows); !s) return s;
    if (auto s = read_integer(*table, "max_stacks", ctx, 10, 1000000, python.max_stacks); !s) return s;
    // A bare file name would never match: the filter sees the whole path.
    if (!python.file_filter.empty() && python.file_filter[0] != '/' && python.file_filter[0] != '*') {
      return fail(table->get("file_filter")->source(), ctx,
                  fmt::format("file_filter = \"{}\" is matched against the whole file path; "
                              "start it with / or * (for example \"*/{}\")",
                              python.file_filter, python.file_filter));
    }
    return {};
  }

  Status read_probes(const toml::table& root, std::vector<ProbeSpec>& out) const {
    const toml::node* node = root.get("probe");
    if (node == nullptr) return {};
    const toml::array* arr = node->as_array();
    if (arr == nullptr) {
      return fail(node->source(), "",
                  fmt::format("probe must be an array of tables: write each probe under its "
                              "own [[probe]] header, not {}",
                              node->is_table() ? "[probe]" : type_name(*node)));
    }
    std::map<std::string, std::uint32_t, std::less<>> first_line;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::node& item = *arr->get(i);
      const toml::table* table = item.as_table();
      if (table == nullptr) {
        return fail(item.source(), "",
                    fmt::format("probe #{} must be a table, not {}", i + 1, type_name(item)));
      }
      ProbeSpec spec;
      if (auto s = read_probe(*table, i, spec); !s) return s;
      const toml::node* name_node = table->get("name");
      auto [it, inserted] = first_line.emplace(spec.name, name_node->source().begin.line);
      if (!inserted) {
        return fail(name_node->source(), fmt::format("probe \"{}\"", spec.name),
                    fmt::format("duplicate probe name (first defined at line {}); probe names "
                                "must be unique",
                                it->second));
      }
      out.push_back(std::move(spec));
    }
    return {};
  }

  Status read_probe(const toml::table& table, std::size_t index, ProbeSpec& spec) const {
    std::string ctx = fmt::format("probe #{}", index + 1);
    // Name the probe in every later message as soon as its name is known.
    if (const toml::node* n = table.get("name"); n != nullptr && n->is_string()) {
      ctx = fmt::format("probe \"{}\"", n->as_string()->get());
    }
    if (auto s = check_keys(table, kProbeKeys, ctx); !s) return s;
    if (!table.contains("name")) {
      return fail(table.source(), ctx, "missing required key \"name\" (a unique probe name)");
    }
    if (auto s = read_string(table, "name", ctx, spec.name); !s) return s;
    spec.domain = "user";
    if (auto s = read_string(table, "domain", ctx, spec.domain); !s) return s;
    if (!table.contains("library")) {
      return fail(table.source(), ctx,
                  "missing required key \"library\" (a glob on the library file name such as "
                  "\"libfoo.so*\")");
    }
    if (auto s = read_string(table, "library", ctx, spec.library); !s) return s;

    const bool has_symbol = table.contains("symbol");
    const bool has_pattern = table.contains("pattern");
    if (has_symbol && has_pattern) {
      return fail(table.get("pattern")->source(), ctx,
                  "give either symbol (one exact name) or pattern (a glob over symbols), not "
                  "both");
    }
    if (!has_symbol && !has_pattern) {
      return fail(table.source(), ctx,
                  "missing \"symbol\" (the exact function name) or \"pattern\" (a glob over "
                  "symbol names)");
    }
    spec.symbol_is_pattern = has_pattern;
    if (auto s = read_string(table, has_pattern ? "pattern" : "symbol", ctx, spec.symbol); !s) {
      return s;
    }
    spec.with_exit = true;
    if (auto s = read_bool(table, "exit", ctx, spec.with_exit); !s) return s;
    if (auto s = read_bool(table, "outer", ctx, spec.outer); !s) return s;
    if (auto s = read_bool(table, "waits", ctx, spec.waits); !s) return s;
    spec.ret = spec.with_exit ? ReturnKind::kInt32 : ReturnKind::kNone;
    if (auto s = read_enum(table, "ret", ctx, kAllReturns, return_kind_name, spec.ret); !s) {
      return s;
    }
    // A user's function returns data unless its spec says which results are failures.
    ErrorRule errors = ErrorRule::kNone;
    if (auto s = read_enum(table, "errors", ctx, kAllErrorRules, error_rule_name, errors); !s) return s;
    spec.errors = errors;

    const toml::array* args = nullptr;
    if (const toml::node* n = table.get("args")) {
      args = n->as_array();
      if (args == nullptr) {
        return fail(n->source(), ctx,
                    fmt::format("args must be an array of tables such as [{{ name = \"size\", "
                                "reg = 1 }}], not {}",
                                type_name(*n)));
      }
      for (std::size_t i = 0; i < args->size(); ++i) {
        const toml::node& item = *args->get(i);
        const toml::table* arg_table = item.as_table();
        if (arg_table == nullptr) {
          return fail(item.source(), ctx,
                      fmt::format("arg #{} must be a table such as {{ name = \"size\", reg = 1 "
                                  "}}, not {}",
                                  i + 1, type_name(item)));
        }
        ArgSpec arg;
        if (auto s = read_arg(*arg_table, ctx, i, spec.args, arg); !s) return s;
        spec.args.push_back(std::move(arg));
      }
    }

    // The rules shared with the built-in catalogs; point at the key that broke one.
    if (auto v = find_spec_violation(spec)) {
      const toml::table* where = &table;
      std::string where_ctx = ctx;
      if (v->arg >= 0) {
        const auto i = static_cast<std::size_t>(v->arg);
        where = args->get(i)->as_table();
        where_ctx += spec.args[i].name.empty() ? fmt::format(": arg #{}", i + 1)
                                               : fmt::format(": arg \"{}\"", spec.args[i].name);
      }
      const toml::node* key_node = where->get(v->key);
      return fail(key_node != nullptr ? key_node->source() : where->source(), where_ctx, v->message);
    }
    return {};
  }

  Status read_arg(const toml::table& table, std::string_view probe_ctx, std::size_t index,
                  const std::vector<ArgSpec>& earlier, ArgSpec& arg) const {
    std::string ctx = fmt::format("{}: arg #{}", probe_ctx, index + 1);
    if (const toml::node* n = table.get("name"); n != nullptr && n->is_string()) {
      ctx = fmt::format("{}: arg \"{}\"", probe_ctx, n->as_string()->get());
    }
    if (auto s = check_keys(table, kArgKeys, ctx); !s) return s;
    if (!table.contains("name")) {
      return fail(table.source(), ctx, "missing required key \"name\" (such as \"size\")");
    }
    if (auto s = read_string(table, "name", ctx, arg.name); !s) return s;

    const bool has_reg = table.contains("reg");
    const bool has_stack = table.contains("stack");
    const bool has_from = table.contains("from");
    if (has_reg && has_stack) {
      return fail(table.get("stack")->source(), ctx,
                  "give either reg (argument register) or stack (stack slot), not both");
    }
    if (has_from && (has_reg || has_stack)) {
      return fail(table.get("from")->source(), ctx,
                  fmt::format("give either from (an earlier arg's value) or {}, not both",
                              has_reg ? "reg" : "stack"));
    }
    if (!has_reg && !has_stack && !has_from) {
      return fail(table.source(), ctx,
                  fmt::format("missing \"reg\" (argument register 0..{}), \"stack\" (stack "
                              "slot 0..{}) or \"from\" (an earlier arg)",
                              kMaxRegisterIndex, kMaxStackSlot));
    }
    if (has_from) {
      // A pointer chain: this arg reads through the value an earlier arg captured.
      std::string from;
      if (auto s = read_string(table, "from", ctx, from); !s) return s;
      std::size_t found = earlier.size();
      std::string names;
      for (std::size_t j = 0; j < earlier.size(); ++j) {
        if (earlier[j].name == from) found = j;
        names += (names.empty() ? "" : ", ") + earlier[j].name;
      }
      if (found == earlier.size()) {
        return fail(table.get("from")->source(), ctx,
                    fmt::format("from = \"{}\" names no earlier arg of this probe ({})", from,
                                names.empty() ? "none before this one" : names));
      }
      arg.source = ArgSource::kArg;
      arg.index = static_cast<std::uint8_t>(found);
      return read_capture(table, ctx, arg);
    }
    arg.source = has_reg ? ArgSource::kRegister : ArgSource::kStack;
    // Only a guard against values that do not fit the index field; the real limits
    // (and their messages) are the spec rules applied afterwards.
    const std::string_view index_key = has_reg ? "reg" : "stack";
    const toml::node* index_node = table.get(index_key);
    const auto* index_value = index_node->as_integer();
    if (index_value == nullptr) {
      return fail(index_node->source(), ctx,
                  fmt::format("{} must be an integer, not {}", index_key, type_name(*index_node)));
    }
    if (index_value->get() < 0 || index_value->get() > UINT8_MAX) {
      return fail(index_node->source(), ctx,
                  fmt::format("{} = {} is out of range 0..{}", index_key, index_value->get(),
                              has_reg ? kMaxRegisterIndex : kMaxStackSlot));
    }
    arg.index = static_cast<std::uint8_t>(index_value->get());
    return read_capture(table, ctx, arg);
  }

  // What to read and how to show it (every source).
  Status read_capture(const toml::table& table, const std::string& ctx, ArgSpec& arg) const {
    if (auto s = read_enum(table, "kind", ctx, kAllKinds, arg_kind_name, arg.kind); !s) return s;
    if (auto s = read_enum(table, "format", ctx, kAllFormats, arg_format_name, arg.format); !s) {
      return s;
    }
    if (auto s = read_bool(table, "at_exit", ctx, arg.at_exit); !s) return s;
    std::uint32_t offset = 0;
    if (auto s = read_integer(table, "offset", ctx, 0, UINT16_MAX, offset); !s) return s;
    arg.offset = static_cast<std::uint16_t>(offset);
    return {};
  }

  std::string_view source_;
};

}  // namespace

std::string_view trace_mode_name(TraceMode mode) {
  return mode == TraceMode::kPerCall ? "per-call" : "always-on";
}

std::optional<TraceMode> parse_trace_mode(std::string_view text) {
  if (text == "per-call") return TraceMode::kPerCall;
  if (text == "always-on") return TraceMode::kAlwaysOn;
  return std::nullopt;
}

Result<Config> parse_config(std::string_view text, std::string_view source_name) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return make_error(fmt::format("{}:{}:{}: TOML syntax error: {}", source_name, begin.line, begin.column,
                                  e.description()));
  }
  return ConfigReader(source_name).read(root);
}

Result<Config> load_config_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int err = errno;
    return make_errno_error(
        err, fmt::format("cannot read config {}: {}", path, std::generic_category().message(err)));
  }
  std::string text;
  char buf[65536];
  int read_errno = 0;
  bool too_large = false;
  for (;;) {
    std::size_t n = std::fread(buf, 1, sizeof buf, file);
    text.append(buf, n);
    if (text.size() > kMaxConfigBytes) {
      too_large = true;
      break;
    }
    if (n < sizeof buf) {
      if (std::ferror(file)) read_errno = errno;
      break;
    }
  }
  std::fclose(file);
  if (too_large) {
    return make_error(
        fmt::format("cannot read config {}: larger than {} MiB; is this the "
                    "right file?",
                    path, kMaxConfigBytes >> 20));
  }
  if (read_errno != 0) {
    return make_errno_error(read_errno, fmt::format("cannot read config {}: {}", path,
                                                    std::generic_category().message(read_errno)));
  }
  return parse_config(text, path);
}

Result<Config> load_config(const std::string& path) {
  if (path.empty()) return Config{};
  return load_config_file(path);
}

}  // namespace eacgm
