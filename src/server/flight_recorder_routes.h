// The daemon's NCCL flight recorder routes (docs/api.md): /api/v1/nccl/flight_recorder, the
// last collectives per communicator and rank as JSON (`?comm_id=`, `?pid=`), and
// /api/v1/nccl/flight_recorder/dump?comm_id=C&rank=R, one rank's dump in PyTorch's
// flight-recorder format (a pickle).
#pragma once

#include <memory>

#include "server/http_server.h"
#include "server/snapshot_source.h"

namespace eacgm::server {

void add_flight_recorder_routes(HttpServer& http, const std::shared_ptr<const SnapshotSource>& source);

}  // namespace eacgm::server
