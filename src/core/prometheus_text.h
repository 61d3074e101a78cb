// Prometheus exposition: text format 0.0.4 and OpenMetrics 1.0.0 from one writer, the
// agent's and eacgm-sched's (so it lives in core, which the scheduler links).
// Callers describe a family (name, type, help, unit) and add samples; the writer
// escapes, applies each format's naming rules and ends OpenMetrics with "# EOF".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace eacgm {

enum class ExpositionFormat {
  kPrometheusText,  // text/plain; version=0.0.4
  kOpenMetrics,     // application/openmetrics-text; version=1.0.0
};

enum class MetricType { kCounter, kGauge, kHistogram, kUnknown };

std::string_view metric_type_name(MetricType type);  // "counter", "gauge", ...

// The Content-Type header value for a format (with charset=utf-8).
std::string_view content_type(ExpositionFormat format);

// The format to answer an Accept header with: OpenMetrics when the client accepts
// application/openmetrics-text (version 1.0.0 or unversioned) with a q-value at least
// as high as any text/plain or */* range it lists; Prometheus text otherwise (also for
// an empty or unparsable header).
ExpositionFormat negotiate_format(std::string_view accept);

struct Label {
  std::string name;
  std::string value;
};
using Labels = std::vector<Label>;

// One histogram bucket: observations with value <= upper_bound that fell into this
// bucket alone (not cumulative); the writer accumulates them into `le` counts and adds
// the +Inf bucket from the total count. Upper bounds must ascend.
struct HistogramBucket {
  double upper_bound = 0.0;
  std::uint64_t count = 0;
};

struct FamilyDesc {
  // The name as Prometheus text shows it. Counters should end in "_total": OpenMetrics
  // then names the family without it and its samples with it. A counter without the
  // suffix (names kept for compatibility, such as DCGM's) stays a counter in Prometheus
  // text and becomes `unknown` in OpenMetrics, so its series keep their exact name.
  std::string_view name;
  MetricType type = MetricType::kGauge;
  std::string_view help;
  // OpenMetrics unit ("bytes", "seconds", "ratio"...): a "# UNIT" line is written only
  // when the family name (without "_total") ends in "_<unit>", as OpenMetrics requires.
  std::string_view unit;
};

class ExpositionWriter {
 public:
  explicit ExpositionWriter(ExpositionFormat format) : format_(format) {}

  ExpositionFormat format() const { return format_; }

  // Starts a family. Its HELP/TYPE lines are written with its first sample, so a family
  // without samples leaves nothing. A name already written is skipped (with its samples):
  // each family appears once.
  void begin_family(const FamilyDesc& desc);

  // A counter, gauge or unknown sample of the current family.
  void add(const Labels& labels, double value);
  void add(const Labels& labels, std::uint64_t value);
  // A sample written with `decimals` digits after the point ("0.250000"), for values kept
  // at a fixed resolution; a non-finite value as format_value writes it.
  void add_fixed(const Labels& labels, double value, int decimals);
  // A histogram of the current family: _bucket series with cumulative `le` counts
  // (ending with le="+Inf" = count), then _sum and _count.
  void add_histogram(const Labels& labels, std::span<const HistogramBucket> buckets, double sum,
                     std::uint64_t count);

  // The text so far plus, for OpenMetrics, "# EOF". The writer is empty afterwards.
  std::string finish();

 private:
  void write_header();
  void write_sample(std::string_view name, const Labels& labels, const Label* extra, std::string_view value);

  ExpositionFormat format_;
  std::string out_;
  std::string name_;  // the current family's sample name
  FamilyDesc desc_;
  std::string help_, unit_;
  bool header_written_ = false;
  bool skip_ = false;
  std::vector<std::string> written_;
};

// Escapes for a label value: backslash, double quote and newline.
std::string escape_label_value(std::string_view value);
// Escapes for HELP text: backslash and newline (and double quote in OpenMetrics).
std::string escape_help(std::string_view help, ExpositionFormat format);
// A sample value: integers without exponent or fraction, NaN, +Inf, -Inf, else the
// shortest representation that parses back to the same double.
std::string format_value(double value);
// A bucket bound as `le`: OpenMetrics wants a float ("1.0", "+Inf"); text takes "1".
std::string format_le(double bound, ExpositionFormat format);

bool is_valid_metric_name(std::string_view name);  // [a-zA-Z_:][a-zA-Z0-9_:]*
bool is_valid_label_name(std::string_view name);   // [a-zA-Z_][a-zA-Z0-9_]*, not __*

}  // namespace eacgm
