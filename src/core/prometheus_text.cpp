// The exposition writer, its escaping and value formats, and the Accept header's
// negotiation (prometheus_text.h).
#include "core/prometheus_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/ascii_text.h"

namespace eacgm {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view metric_type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view content_type(ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

ExpositionFormat negotiate_format(std::string_view accept) {
  double best_om = -1.0;
  double best_text = -1.0;
  while (!accept.empty()) {
    const auto comma = accept.find(',');
    std::string_view range = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view{} : accept.substr(comma + 1);

    const auto semi = range.find(';');
    const std::string type = lower(trim(range.substr(0, semi)));
    double q = 1.0;
    std::string version;
    std::string_view params = semi == std::string_view::npos ? std::string_view{} : range.substr(semi + 1);
    while (!params.empty()) {
      const auto next = params.find(';');
      const std::string_view param = trim(params.substr(0, next));
      params = next == std::string_view::npos ? std::string_view{} : params.substr(next + 1);
      const auto eq = param.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string key = lower(trim(param.substr(0, eq)));
      const std::string value(trim(param.substr(eq + 1)));
      if (key == "q") {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (end != value.c_str()) q = std::clamp(v, 0.0, 1.0);
      } else if (key == "version") {
        version = value;
      }
    }
    if (q <= 0.0) continue;
    if (type == "application/openmetrics-text") {
      if (version.empty() || version == "1.0.0") best_om = std::max(best_om, q);
    } else if (type == "text/plain" || type == "*/*" || type == "text/*") {
      best_text = std::max(best_text, q);
    }
  }
  return best_om > 0.0 && best_om >= best_text ? ExpositionFormat::kOpenMetrics
                                               : ExpositionFormat::kPrometheusText;
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view help, ExpositionFormat format) {
  std::string out;
  out.reserve(help.size());
  for (const char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && format == ExpositionFormat::kOpenMetrics) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  return fmt::format("{}", value);
}

std::string format_le(double bound, ExpositionFormat format) {
  std::string s = format_value(bound);
  if (format == ExpositionFormat::kOpenMetrics && std::isfinite(bound) &&
      s.find_first_of(".eE") == std::string::npos) {
    s += ".0";
  }
  return s;
}

bool is_valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool ok = std::isalpha(c) || c == '_' || c == ':' || (i > 0 && std::isdigit(c));
    if (!ok || c > 127) return false;
  }
  return true;
}

bool is_valid_label_name(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool ok = std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c));
    if (!ok || c > 127) return false;
  }
  return true;
}

void ExpositionWriter::begin_family(const FamilyDesc& desc) {
  desc_ = desc;
  name_.assign(desc.name);
  help_.assign(desc.help);
  unit_.assign(desc.unit);
  desc_.name = name_;
  desc_.help = help_;
  desc_.unit = unit_;
  header_written_ = false;
  skip_ = std::find(written_.begin(), written_.end(), name_) != written_.end();
}

void ExpositionWriter::write_header() {
  header_written_ = true;
  written_.push_back(name_);
  const bool om = format_ == ExpositionFormat::kOpenMetrics;
  std::string_view family = name_;
  MetricType type = desc_.type;
  if (om && type == MetricType::kCounter) {
    if (ends_with(family, "_total")) {
      family.remove_suffix(6);
    } else {
      type = MetricType::kUnknown;  // a legacy counter name keeps its exact series name
    }
  }
  if (!desc_.help.empty())
    fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n", family, escape_help(desc_.help, format_));
  fmt::format_to(std::back_inserter(out_), "# TYPE {} {}\n", family, metric_type_name(type));
  if (om && !desc_.unit.empty() && ends_with(family, fmt::format("_{}", desc_.unit))) {
    fmt::format_to(std::back_inserter(out_), "# UNIT {} {}\n", family, desc_.unit);
  }
}

void ExpositionWriter::write_sample(std::string_view name, const Labels& labels, const Label* extra,
                                    std::string_view value) {
  out_ += name;
  if (!labels.empty() || extra) {
    out_ += '{';
    bool first = true;
    auto put = [&](const Label& l) {
      if (!first) out_ += ',';
      first = false;
      fmt::format_to(std::back_inserter(out_), "{}=\"{}\"", l.name, escape_label_value(l.value));
    };
    for (const auto& l : labels) put(l);
    if (extra) put(*extra);
    out_ += '}';
  }
  out_ += ' ';
  out_ += value;
  out_ += '\n';
}

void ExpositionWriter::add(const Labels& labels, double value) {
  if (skip_) return;
  if (!header_written_) write_header();
  write_sample(name_, labels, nullptr, format_value(value));
}

void ExpositionWriter::add(const Labels& labels, std::uint64_t value) {
  if (skip_) return;
  if (!header_written_) write_header();
  write_sample(name_, labels, nullptr, fmt::format("{}", value));
}

void ExpositionWriter::add_fixed(const Labels& labels, double value, int decimals) {
  if (skip_) return;
  if (!header_written_) write_header();
  write_sample(name_, labels, nullptr,
               std::isfinite(value) ? fmt::format("{:.{}f}", value, decimals) : format_value(value));
}

void ExpositionWriter::add_histogram(const Labels& labels, std::span<const HistogramBucket> buckets,
                                     double sum, std::uint64_t count) {
  if (skip_) return;
  if (!header_written_) write_header();
  std::uint64_t cumulative = 0;
  const std::string bucket_name = name_ + "_bucket";
  for (const auto& b : buckets) {
    if (!std::isfinite(b.upper_bound)) continue;  // +Inf comes from the total
    cumulative += b.count;
    const Label le{"le", format_le(b.upper_bound, format_)};
    write_sample(bucket_name, labels, &le, fmt::format("{}", cumulative));
  }
  const Label inf{"le", "+Inf"};
  write_sample(bucket_name, labels, &inf, fmt::format("{}", std::max(count, cumulative)));
  write_sample(name_ + "_sum", labels, nullptr, format_value(sum));
  write_sample(name_ + "_count", labels, nullptr, fmt::format("{}", std::max(count, cumulative)));
}

std::string ExpositionWriter::finish() {
  if (format_ == ExpositionFormat::kOpenMetrics) out_ += "# EOF\n";
  std::string out = std::move(out_);
  out_.clear();
  written_.clear();
  header_written_ = false;
  skip_ = false;
  return out;
}

}  // namespace eacgm
