// The flight recorder routes, read from the source's newest snapshot.
#include "server/flight_recorder_routes.h"

#include <charconv>
#include <optional>
#include <string>

#include "export/api_json.h"
#include "export/flight_recorder_dump.h"
#include "export/flight_recorder_json.h"
#include "server/query_params.h"

namespace eacgm::server {
namespace {

constexpr std::string_view kCommIdHint = "comm_id: a communicator id, 0x and hex digits as the API gives it";

// "0x..." (as the API writes it) or decimal; nullopt when not one.
std::optional<std::uint64_t> parse_comm_id(std::string_view text) {
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    base = 16;
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v == 0) return std::nullopt;
  return v;
}

}  // namespace

void add_flight_recorder_routes(HttpServer& http, const std::shared_ptr<const SnapshotSource>& source) {
  http.route("/api/v1/nccl/flight_recorder", [source](const Request& req) {
    exporting::FlightFilter filter;
    if (auto c = req.param("comm_id")) {
      filter.comm_id = parse_comm_id(*c);
      if (!filter.comm_id) return Response::json_error(400, kCommIdHint);
    }
    auto pid = pid_param(req);
    if (!pid) return Response::json_error(400, pid.error());
    filter.pid = *pid;
    auto snap = source->latest();
    if (!snap) return Response::json_error(503, kNoSnapshotYet);
    return Response::json(exporting::api_flight_recorder(*snap, filter));
  });
  http.route("/api/v1/nccl/flight_recorder/dump", [source](const Request& req) {
    auto c = req.param("comm_id");
    const auto comm_id = c ? parse_comm_id(*c) : std::nullopt;
    if (!comm_id) return Response::json_error(400, kCommIdHint);
    auto r = req.param("rank");
    const auto rank = r ? parse_number(*r, 0, INT32_MAX) : std::nullopt;
    if (!rank) return Response::json_error(400, "rank: the communicator rank, a whole number from 0");
    auto snap = source->latest();
    if (!snap) return Response::json_error(503, kNoSnapshotYet);
    for (const auto& fr : snap->get<analysis::FlightRecord>().ranks) {
      if (fr.comm_id != *comm_id || fr.rank != static_cast<std::int32_t>(*rank)) continue;
      Response out;
      out.content_type = "application/octet-stream";
      out.body = exporting::flight_recorder_pickle(fr);
      return out;
    }
    return Response::json_error(404,
                                "no such communicator and rank in the flight recorder: "
                                "GET /api/v1/nccl/flight_recorder lists them");
  });
}

}  // namespace eacgm::server
