// ApiClient: what the client commands (`eacgm capture`, `eacgm top`) ask a running agent
// over HTTP: one request at a time to http(s)://HOST:PORT, with the bearer token when
// one is given. cpp-httplib does the protocol, as for the server.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace eacgm::server {

inline constexpr std::string_view kDefaultServerUrl = "http://127.0.0.1:9977";

struct ApiReply {
  int status = 0;
  std::string content_type;
  std::string body;
};

class ApiClient {
 public:
  // `url`: http://HOST:PORT or https://HOST:PORT (no path); `token`: "" for none.
  static Result<std::unique_ptr<ApiClient>> open(const std::string& url, const std::string& token,
                                                 std::chrono::seconds timeout);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // A failure to reach the agent is an error ("cannot reach the agent at URL: ..."); any
  // HTTP answer, 4xx and 5xx included, is a reply.
  // (The error's sys_errno says why: ETIMEDOUT for no connection or no answer in time,
  // ECONNREFUSED for a connection refused or failed, 0 otherwise.)
  Result<ApiReply> get(const std::string& path);
  // GET with query parameters (encoded here) and extra request headers.
  using Fields = std::vector<std::pair<std::string, std::string>>;
  Result<ApiReply> get(const std::string& path, const Fields& params, const Fields& headers);
  Result<ApiReply> post_json(const std::string& path, const std::string& body);
  const std::string& url() const { return url_; }

 private:
  struct Impl;
  ApiClient(std::string url, std::unique_ptr<Impl> impl);
  std::string url_;
  std::unique_ptr<Impl> impl_;
};

// The error message of an agent's JSON error body ({"error":"..."}), else the body's
// first line.
std::string api_error_text(const ApiReply& reply);

}  // namespace eacgm::server
