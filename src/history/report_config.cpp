// [report]'s keys: the price of a GPU-hour with its currency, and the idle threshold.
#include "history/report_config.h"

#include <string>
#include <string_view>

#include "core/config_reader.h"

namespace eacgm::history {
namespace {

// A code such as "USD": short, without the separators of the report's CSV and tables.
bool plain_code(const std::string& currency) {
  return currency.size() <= 8 && currency.find_first_of(" \t\n\",") == std::string::npos;
}

Status read_report(const ConfigTable& table, ReportOptions& report) {
  constexpr std::string_view kKeys[] = {"gpu_hour_price", "currency", "idle_threshold", "top_kernels"};
  if (auto s = table.check_keys(kKeys); !s) return s;
  if (auto s = table.read_number("gpu_hour_price", 0, 1e6, report.gpu_hour_price); !s) return s;
  if (auto s = table.read_number("idle_threshold", 0, 1, report.idle_threshold); !s) return s;
  if (auto s = table.read_integer("top_kernels", 1, 100, report.top_kernels); !s) return s;
  if (auto s = table.read_string("currency", report.currency); !s) return s;
  if (plain_code(report.currency)) return {};
  return table.fail_at("currency",
                       "currency must be a short code such as \"USD\" or \"EUR\" (at most 8 characters, no "
                       "spaces, quotes or commas)");
}

}  // namespace

void add_report_section(ConfigSections& sections, ReportOptions& report) {
  sections.add_table<read_report>("report", report);
}

}  // namespace eacgm::history
