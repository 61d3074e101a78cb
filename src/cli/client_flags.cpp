// --server and --token-file for the client commands (cli/client_flags.h).
#include "cli/client_flags.h"

#include <utility>

#include "server/http_server.h"

namespace eacgm::cli {

void add_client_options(CLI::App& sub, ClientFlags& flags) {
  sub.add_option("--server", flags.server, "the agent's URL (default http://127.0.0.1:9977)");
  sub.add_option("--token-file", flags.token_file,
                 "file holding the agent's bearer token (mode 0600), when it asks for one");
}

Result<std::unique_ptr<server::ApiClient>> open_client(const ClientFlags& flags,
                                                       std::chrono::seconds timeout) {
  std::string token;
  if (!flags.token_file.empty()) {
    auto t = server::load_token_file(flags.token_file);
    if (!t) return make_error(ErrorKind::kUsage, "--token-file: " + t.error());
    token = std::move(*t);
  }
  return server::ApiClient::open(flags.server, std::move(token), timeout);
}

}  // namespace eacgm::cli
