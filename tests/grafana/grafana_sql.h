// The history dashboards' SQL as Grafana's PostgreSQL data source sends it: the queries
// of deploy/grafana/dashboards/history.json and efficiency.json (their query variables'
// and their panels') and the substitution of Grafana's macros and variables into them. Used by
// tests/grafana/history_sql_test.cpp and bench/fleet/fleet_store.cpp.
//
// The substitution (grafana_sql), as Grafana writes it for PostgreSQL:
//   $__timeFrom(), $__timeTo()  the range's ends in RFC 3339 with nanoseconds, UTC, quoted:
//                               '2026-11-28T07:00:00.123456789Z'
//   $__timeFilter(expr)         expr BETWEEN '<from>' AND '<to>'
//   $__interval_ms              the range over 1000 points, in ms (at least 1)
//   $var, ${var}                a multi-value variable: each chosen value in single quotes
//                               (a quote doubled), joined by commas; "All" is the variable's
//                               allValue as written (Grafana leaves a custom all value
//                               unquoted), or every option quoted when it has none
//   ${var:sqlstring}            a textbox's value in single quotes, a quote doubled
//                               (grafana_text, before grafana_sql)
// Anything else that starts with $ is left as it is.
#pragma once

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

namespace eacgm::grafana {

struct Range {
  std::int64_t from_ns, to_ns;
};

// A variable's choice: "All", or values.
struct Choice {
  bool all = true;
  std::vector<std::string> values;
};

struct Variable {
  std::string name;
  std::string sql;
  std::string all_value;  // "" when none is set
  std::vector<std::string> options;
};

// A panel's query: where it is ("panel '<title>' <refId>"), its SQL, its format.
struct PanelQuery {
  std::string where, sql, format;
};

inline std::string utc(std::int64_t ns) {
  constexpr std::int64_t kS = 1'000'000'000;
  const std::time_t s = static_cast<std::time_t>(ns / kS);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  // Go's RFC3339Nano: the fraction without its trailing zeros, none when whole.
  std::string fraction;
  if (ns % kS != 0) {
    fraction = std::to_string(kS + ns % kS).substr(1);
    while (fraction.back() == '0') fraction.pop_back();
    fraction = "." + fraction;
  }
  return std::string("'") + buf + fraction + "Z'";
}

inline std::string quoted(const std::string& v) {
  std::string out = "'";
  for (char c : v) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

inline std::string joined(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ",") + quoted(v);
  return out;
}

inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

inline std::string grafana_sql(std::string sql, const Range& r, const std::vector<Variable>& vars,
                               const std::map<std::string, Choice>& choices) {
  sql = replace_all(sql, "$__timeFrom()", utc(r.from_ns));
  sql = replace_all(sql, "$__timeTo()", utc(r.to_ns));
  sql = std::regex_replace(sql, std::regex(R"(\$__timeFilter\(([^)]*)\))"),
                           "$1 BETWEEN " + utc(r.from_ns) + " AND " + utc(r.to_ns));
  const std::int64_t interval_ms = std::max<std::int64_t>(1, (r.to_ns - r.from_ns) / 1'000'000 / 1000);
  sql = replace_all(sql, "$__interval_ms", std::to_string(interval_ms));
  for (const auto& v : vars) {
    const auto c = choices.find(v.name);
    std::string value;
    if (c == choices.end() || c->second.all) {
      value = v.all_value.empty() ? joined(v.options) : v.all_value;
    } else {
      value = joined(c->second.values);
    }
    sql = replace_all(sql, "${" + v.name + "}", value);
    sql = std::regex_replace(sql, std::regex("\\$" + v.name + "\\b"), value);
  }
  return sql;
}

// The dashboard's query variables, in order (their options empty).
inline std::vector<Variable> dashboard_variables(const nlohmann::json& doc) {
  std::vector<Variable> vars;
  for (const auto& v : doc["templating"]["list"]) {
    if (v.value("type", "") != "query") continue;
    Variable var;
    var.name = v["name"];
    var.sql = v["query"].is_string() ? v["query"].get<std::string>() : v["query"].value("rawSql", "");
    var.all_value = v.value("allValue", "");
    vars.push_back(var);
  }
  return vars;
}

// The dashboard's textboxes and their defaults.
inline std::map<std::string, std::string> dashboard_texts(const nlohmann::json& doc) {
  std::map<std::string, std::string> texts;
  for (const auto& v : doc["templating"]["list"]) {
    if (v.value("type", "") == "textbox") texts[v["name"]] = v.value("query", "");
  }
  return texts;
}

// The textboxes' values, each ${name:sqlstring} as an SQL string.
inline std::string grafana_text(std::string sql, const std::map<std::string, std::string>& values) {
  for (const auto& [name, value] : values) sql = replace_all(sql, "${" + name + ":sqlstring}", quoted(value));
  return sql;
}

// Every panel's queries, rows' panels included.
inline std::vector<PanelQuery> dashboard_queries(const nlohmann::json& doc) {
  std::vector<PanelQuery> queries;
  std::function<void(const nlohmann::json&)> collect = [&](const nlohmann::json& panels) {
    for (const auto& p : panels) {
      for (const auto& t : p.value("targets", nlohmann::json::array())) {
        queries.push_back({"panel '" + p.value("title", "") + "' " + t.value("refId", ""),
                           t.value("rawSql", ""), t.value("format", "time_series")});
      }
      if (p.contains("panels")) collect(p["panels"]);
    }
  };
  collect(doc["panels"]);
  return queries;
}

}  // namespace eacgm::grafana
