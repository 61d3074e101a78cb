// The flags of the commands that talk to a running agent (`capture`, `top`): --server and
// --token-file, and the client they make.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "core/result.h"
#include "server/api_client.h"

namespace eacgm::cli {

struct ClientFlags {
  std::string server{server::kDefaultServerUrl};
  std::string token_file;
};

void add_client_options(CLI::App& sub, ClientFlags& flags);
// The client for `flags` (the token read from its file, which must be private).
Result<std::unique_ptr<server::ApiClient>> open_client(const ClientFlags& flags,
                                                       std::chrono::seconds timeout);

}  // namespace eacgm::cli
