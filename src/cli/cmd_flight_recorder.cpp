// `eacgm flight-recorder`: asks a running agent (`eacgm serve`) for the last NCCL collectives
// per communicator and rank, and prints them as JSON or, with --dump DIR, writes one file per
// rank in PyTorch's flight-recorder format for its analyzer (fr_trace).
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/client_flags.h"
#include "cli/commands.h"
#include "cli/trace_runner.h"
#include "export/flight_recorder_dump.h"

namespace eacgm::cli {
namespace {

constexpr std::string_view kCommand = "flight-recorder";

struct FlightRecorderFlags {
  ClientFlags client;
  std::string dump;
  std::string comm;
};

Result<server::ApiReply> ask(server::ApiClient& client, const std::string& path) {
  auto reply = client.get(path);
  if (!reply) return std::move(reply).take_error();
  if (reply->status != 200)
    return make_error(
        fmt::format("the agent answered {}: {}", reply->status, server::api_error_text(*reply)));
  return reply;
}

// The communicator to dump: the one named, else the one with the most ranks (the job's
// world, as a rule), the others said.
const nlohmann::json* pick_communicator(const nlohmann::json& comms, bool named) {
  const nlohmann::json* best = nullptr;
  for (const auto& c : comms) {
    if (best == nullptr || c.value("nranks", 0) > best->value("nranks", 0) ||
        (c.value("nranks", 0) == best->value("nranks", 0) && c["ranks"].size() > (*best)["ranks"].size()))
      best = &c;
  }
  if (best != nullptr && !named && comms.size() > 1) {
    std::string others;
    for (const auto& c : comms) {
      if (&c != best) others += fmt::format(" {} ({} ranks)", c.value("comm_id", ""), c.value("nranks", 0));
    }
    print_error(fmt::format("{} communicators: dumping {}, the largest; the others (--comm ID):{}",
                            comms.size(), best->value("comm_id", ""), others));
  }
  return best;
}

bool write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && written;
}

int dump_command(server::ApiClient& client, const FlightRecorderFlags& flags, const nlohmann::json& doc) {
  const nlohmann::json* comm = pick_communicator(doc["communicators"], !flags.comm.empty());
  if (comm == nullptr) {
    print_command_error(kCommand,
                        flags.comm.empty()
                            ? "the agent has recorded no NCCL collective on a known communicator"
                            : fmt::format("--comm {}: not in the agent's flight recorder", flags.comm));
    return 1;
  }
  std::error_code ec;
  std::filesystem::create_directories(flags.dump, ec);
  if (ec) {
    print_command_error(kCommand, fmt::format("--dump {}: {}", flags.dump, ec.message()));
    return 2;
  }
  const std::string id = comm->value("comm_id", "");
  std::string ranks;
  for (const auto& r : (*comm)["ranks"]) {
    const int rank = r.value("rank", -1);
    auto reply = ask(client, fmt::format("/api/v1/nccl/flight_recorder/dump?comm_id={}&rank={}", id, rank));
    if (!reply) {
      print_command_error(kCommand, reply.error());
      return 1;
    }
    const auto path =
        std::filesystem::path(flags.dump) / fmt::format("{}{}", exporting::kFlightDumpPrefix, rank);
    if (!write_file(path, reply->body)) {
      print_command_error(kCommand, fmt::format("{}: {}", path.string(), std::strerror(errno)));
      return 1;
    }
    ranks += fmt::format("{}{}", ranks.empty() ? "" : ",", rank);
  }
  const int nranks = comm->value("nranks", 0);
  print_error(
      fmt::format("wrote ranks {} of communicator {} ({} ranks) into {}", ranks, id, nranks, flags.dump));
  if (nranks > static_cast<int>((*comm)["ranks"].size()))
    print_error(
        "the other ranks run on other nodes: run this against their agents (--server) with the same --dump "
        "directory, or pass --allow-incomplete-ranks to the analyzer");
  print_error(
      fmt::format("analyze with: python -m torch.distributed.flight_recorder.fr_trace {}", flags.dump));
  return 0;
}

int flight_recorder_command(const FlightRecorderFlags& flags) {
  if (!flags.comm.empty() && flags.comm.find_first_not_of("0123456789abcdefABCDEFx") != std::string::npos) {
    print_command_error(
        kCommand,
        fmt::format("--comm {}: a communicator id as the API gives it (0x and hex digits)", flags.comm));
    return 2;
  }
  auto client = open_client(flags.client, std::chrono::seconds(30));
  if (!client) {
    print_command_error(kCommand, client.error());
    return 2;
  }
  std::string path = "/api/v1/nccl/flight_recorder";
  if (!flags.comm.empty()) path += "?comm_id=" + flags.comm;
  auto reply = ask(**client, path);
  if (!reply) {
    print_command_error(kCommand, reply.error());
    return 1;
  }
  auto doc = nlohmann::json::parse(reply->body, nullptr, false);
  if (doc.is_discarded() || !doc.contains("communicators")) {
    print_command_error(kCommand, "the agent's answer is not the flight recorder's JSON (an older agent?)");
    return 1;
  }
  if (flags.dump.empty()) {
    std::printf("%s\n", reply->body.c_str());
    return 0;
  }
  return dump_command(**client, flags, doc);
}

}  // namespace

void add_flight_recorder_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<FlightRecorderFlags>();
  auto* sub = app.add_subcommand(std::string(kCommand),
                                 "the last NCCL collectives per communicator and rank, from a running agent "
                                 "(eacgm serve): as JSON, or dumped for PyTorch's flight-recorder analyzer");
  add_client_options(*sub, flags->client);
  sub->add_option("--dump", flags->dump,
                  "write one file per rank of one communicator into this directory (nccl_trace_rank_<rank>)");
  sub->add_option("--comm", flags->comm,
                  "the communicator (its comm_id, 0x...); default: the one with the most ranks");
  sub->final_callback([&ctx, flags] { ctx.exit_code = flight_recorder_command(*flags); });
  sub->footer(
      "Examples:\n"
      "  eacgm flight-recorder\n"
      "  eacgm flight-recorder --dump fr/ && python -m torch.distributed.flight_recorder.fr_trace fr/\n"
      "  eacgm flight-recorder --server http://node-b:9977 --token-file ~/.eacgm-token --comm 0x1f2e... "
      "--dump fr/");
}

}  // namespace eacgm::cli
