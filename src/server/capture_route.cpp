// The capture route: check the request, find the process, capture, render.
#include "server/capture_route.h"

#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "analysis/anomaly_detector.h"
#include "analysis/process_calls.h"
#include "core/proc_file.h"
#include "export/capture_trace.h"
#include "server/query_params.h"

namespace eacgm::server {
namespace {

using json = nlohmann::json;

// "a=1&b=x%20y": decoded pairs (a form body).
std::vector<std::pair<std::string, std::string>> form_fields(std::string_view body) {
  auto decode = [](std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '+') {
        out += ' ';
      } else if (s[i] == '%' && i + 2 < s.size()) {
        out += static_cast<char>(std::strtol(std::string(s.substr(i + 1, 2)).c_str(), nullptr, 16));
        i += 2;
      } else {
        out += s[i];
      }
    }
    return out;
  };
  std::vector<std::pair<std::string, std::string>> out;
  while (!body.empty()) {
    const auto amp = body.find('&');
    const std::string_view field = body.substr(0, amp);
    const auto eq = field.find('=');
    if (!field.empty()) {
      out.emplace_back(decode(field.substr(0, eq)),
                       eq == std::string_view::npos ? std::string() : decode(field.substr(eq + 1)));
    }
    if (amp == std::string_view::npos) break;
    body.remove_prefix(amp + 1);
  }
  return out;
}

Result<double> seconds_of(const json& v) {
  double s = 0;
  if (v.is_number()) {
    s = v.get<double>();
  } else if (v.is_string()) {
    char* end = nullptr;
    const std::string text = v.get<std::string>();
    s = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') return make_error("seconds: a number of seconds from 0 to 60");
  } else {
    return make_error("seconds: a number of seconds from 0 to 60");
  }
  if (!std::isfinite(s) || s <= 0 || s > static_cast<double>(kMaxCaptureSeconds)) {
    return make_error(fmt::format("seconds: more than 0 and at most {} (asked {})", kMaxCaptureSeconds, s));
  }
  return s;
}

Result<std::uint32_t> pid_of(const json& v) {
  std::string text = v.is_string()            ? v.get<std::string>()
                     : v.is_number_unsigned() ? std::to_string(v.get<std::uint64_t>())
                                              : "";
  auto n = parse_number(text, 1, 0xffffffffu);
  if (!n) return make_error("pid: a process id (a whole number from 1)");
  return static_cast<std::uint32_t>(*n);
}

Result<long> rank_of(const json& v) {
  std::string text = v.is_string()            ? v.get<std::string>()
                     : v.is_number_unsigned() ? std::to_string(v.get<std::uint64_t>())
                                              : "";
  auto n = parse_number(text, 0, 1u << 24);
  if (!n) return make_error("rank: a whole number from 0");
  return static_cast<long>(*n);
}

std::string refusal_status_text(CaptureRefusal r) {
  switch (r) {
    case CaptureRefusal::kBusy:
      return "busy";
    case CaptureRefusal::kTooMany:
      return "too many";
    case CaptureRefusal::kNoTrace:
      return "no trace";
    case CaptureRefusal::kFailed:
      return "failed";
    case CaptureRefusal::kNone:
      break;
  }
  return "";
}

int refusal_status(CaptureRefusal r) {
  switch (r) {
    case CaptureRefusal::kBusy:
      return 409;
    case CaptureRefusal::kTooMany:
    case CaptureRefusal::kNoTrace:
      return 503;
    case CaptureRefusal::kFailed:
    case CaptureRefusal::kNone:
      break;
  }
  return 500;
}

// The one process a comm or a rank names: by name among all processes, by rank among
// the traced ones (those in the snapshot).
Result<std::uint32_t> resolve(const CaptureAsk& ask, const CaptureRouteParts& parts) {
  if (ask.pid) {
    if (!parts.facts->alive(*ask.pid)) return make_error(fmt::format("pid {}: no such process", *ask.pid));
    return *ask.pid;
  }
  std::vector<std::uint32_t> found;
  if (ask.comm) {
    DIR* d = ::opendir(parts.proc_root.c_str());
    if (d == nullptr)
      return make_error(fmt::format("cannot list {}: {}", parts.proc_root, std::strerror(errno)));
    while (const dirent* e = ::readdir(d)) {
      auto pid = parse_number(e->d_name, 1, 0xffffffffu);
      if (!pid || static_cast<pid_t>(*pid) == ::getpid()) continue;
      if (read_proc_comm(parts.proc_root, e->d_name) == *ask.comm)
        found.push_back(static_cast<std::uint32_t>(*pid));
    }
    ::closedir(d);
    if (found.empty()) return make_error(fmt::format("comm \"{}\": no such process", *ask.comm));
  } else {
    auto snap = parts.source->latest();
    if (const auto* by_process = snap ? snap->find<analysis::ProcessCallsView>() : nullptr) {
      for (const auto& [pid, p] : by_process->processes) {
        if (p.exited) continue;
        if (parts.facts->rank(pid).rank == ask.rank) found.push_back(pid);
      }
    }
    if (found.empty()) return make_error(fmt::format("rank {}: no traced process has this rank", *ask.rank));
  }
  if (found.size() > 1) {
    std::string pids;
    for (auto p : found) pids += (pids.empty() ? "" : ", ") + std::to_string(p);
    return make_error(fmt::format("{} processes match ({}): name one by pid", found.size(), pids));
  }
  return found.front();
}

}  // namespace

Result<CaptureAsk> parse_capture_ask(const Request& req) {
  json fields = json::object();
  for (const auto& [k, v] : req.params) fields[k] = v;
  const std::string type = req.header("Content-Type");
  const bool has_body = req.body.find_first_not_of(" \t\r\n") != std::string::npos;
  if (has_body) {
    if (type.starts_with("application/x-www-form-urlencoded")) {
      for (const auto& [k, v] : form_fields(req.body)) fields[k] = v;
    } else {
      json body = json::parse(req.body, nullptr, false);
      if (body.is_discarded() || !body.is_object()) {
        return make_error("the body is not a JSON object (send {\"pid\":123,\"seconds\":5})");
      }
      for (auto& [k, v] : body.items()) fields[k] = v;
    }
  }
  CaptureAsk ask;
  int selectors = 0;
  for (auto& [k, v] : fields.items()) {
    if (k == "pid") {
      auto p = pid_of(v);
      if (!p) return std::move(p).take_error();
      ask.pid = *p;
      ++selectors;
    } else if (k == "comm") {
      if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 15) {
        return make_error("comm: a process name (1 to 15 characters, as in /proc/PID/comm)");
      }
      ask.comm = v.get<std::string>();
      ++selectors;
    } else if (k == "rank") {
      auto r = rank_of(v);
      if (!r) return std::move(r).take_error();
      ask.rank = *r;
      ++selectors;
    } else if (k == "pids") {
      if (!v.is_array() || v.empty() || v.size() > kMaxCapturePids) {
        return make_error(fmt::format("pids: an array of 1 to {} process ids", kMaxCapturePids));
      }
      for (const auto& one : v) {
        auto p = pid_of(one);
        if (!p) return make_error("pids: each a process id (a whole number from 1)");
        if (std::find(ask.pids.begin(), ask.pids.end(), *p) != ask.pids.end())
          return make_error(fmt::format("pids: {} is there twice", *p));
        ask.pids.push_back(*p);
      }
      ++selectors;
    } else if (k == "seconds") {
      auto s = seconds_of(v);
      if (!s) return std::move(s).take_error();
      ask.seconds = *s;
    } else {
      return make_error(fmt::format("unknown field \"{}\" (pid, comm, rank, pids, seconds)", k));
    }
  }
  if (selectors == 0) return make_error("nothing selects a process: give pid, comm, rank or pids");
  if (selectors > 1) return make_error("give one of pid, comm, rank and pids");
  if (ask.seconds == 0) return make_error("seconds: missing (more than 0 and at most 60)");
  return ask;
}

void add_capture_route(HttpServer& http, CaptureRouteParts parts) {
  auto shared = std::make_shared<CaptureRouteParts>(std::move(parts));
  auto running = std::make_shared<std::atomic<std::size_t>>(0);
  http.post_route("/api/v1/capture", [shared, running](const Request& req) {
    auto ask = parse_capture_ask(req);
    if (!ask) return Response::json_error(400, ask.error());
    std::vector<std::uint32_t> pids = ask->pids;
    if (pids.empty()) {
      auto pid = resolve(*ask, *shared);
      if (!pid) return Response::json_error(400, pid.error());
      pids.push_back(*pid);
    }
    for (auto p : ask->pids) {
      if (!shared->facts->alive(p))
        return Response::json_error(400, fmt::format("pid {}: no such process", p));
    }
    if (running->fetch_add(1) >= shared->max_running) {
      running->fetch_sub(1);
      Response r = Response::json_error(
          503, fmt::format("{} captures are running already (the server keeps its other workers for scrapes "
                           "and API calls): try again when one ends",
                           shared->max_running));
      r.headers.emplace_back("Retry-After", "5");
      return r;
    }
    const struct Done {
      std::atomic<std::size_t>& n;
      ~Done() { n.fetch_sub(1); }
    } done{*running};
    const auto window =
        std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ask->seconds * 1000)));
    // Each process on a thread of its own over the same window (the recorder arms several
    // at once); this worker waits for all of them.
    std::vector<CaptureResult> got(pids.size());
    if (pids.size() == 1) {
      got[0] = shared->control->capture(pids[0], window, *shared->cancel);
    } else {
      std::vector<std::jthread> threads;
      threads.reserve(pids.size());
      for (std::size_t i = 0; i < pids.size(); ++i) {
        threads.emplace_back([&, i] { got[i] = shared->control->capture(pids[i], window, *shared->cancel); });
      }
    }
    std::vector<analysis::Anomaly> anomalies;
    if (auto snap = shared->source->latest(); snap) {
      const auto& recent = snap->get<analysis::AnomalySummary>().recent;
      anomalies.assign(recent.begin(), recent.end());
    }
    const auto render = [&](std::size_t i) {
      if (got[i].window.comm.empty())
        got[i].window.comm = read_proc_comm(shared->proc_root, std::to_string(pids[i]));
      return exporting::capture_trace_json(got[i].window, anomalies, CaptureControl::Limits{});
    };
    if (ask->pids.empty()) {
      if (got[0].refusal != CaptureRefusal::kNone) {
        return Response::json_error(refusal_status(got[0].refusal), got[0].message.empty()
                                                                        ? refusal_status_text(got[0].refusal)
                                                                        : got[0].message);
      }
      return Response::json(render(0));
    }
    // {"captures":[{"pid":P,"trace":{...}} or {"pid":P,"status":409,"error":"..."}, ...]}
    std::string body = "{\"captures\":[";
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (i > 0) body += ',';
      if (got[i].refusal != CaptureRefusal::kNone) {
        body += json{{"pid", pids[i]},
                     {"status", refusal_status(got[i].refusal)},
                     {"error", got[i].message.empty() ? refusal_status_text(got[i].refusal) : got[i].message}}
                    .dump();
      } else {
        body += fmt::format("{{\"pid\":{},\"trace\":", pids[i]);
        std::string trace = render(i);
        while (!trace.empty() && trace.back() == '\n') trace.pop_back();
        body += trace;
        body += '}';
      }
    }
    body += "]}\n";
    return Response::json(std::move(body));
  });
}

}  // namespace eacgm::server
