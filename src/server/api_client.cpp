// The client side of the agent's API over cpp-httplib (server/api_client.h).
#include "server/api_client.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <utility>

namespace eacgm::server {

struct ApiClient::Impl {
  explicit Impl(const std::string& url) : client(url) {}
  httplib::Client client;
};

ApiClient::ApiClient(std::string url, std::unique_ptr<Impl> impl)
    : url_(std::move(url)), impl_(std::move(impl)) {}
ApiClient::~ApiClient() = default;

Result<std::unique_ptr<ApiClient>> ApiClient::open(const std::string& url, const std::string& token,
                                                   std::chrono::seconds timeout) {
  if (!url.starts_with("http://") && !url.starts_with("https://")) {
    return make_error(ErrorKind::kUsage, fmt::format("--server {}: not an http:// or https:// URL", url));
  }
  const auto rest = url.substr(url.find("://") + 3);
  if (rest.empty() || rest.find('/') != std::string::npos) {
    return make_error(
        ErrorKind::kUsage,
        fmt::format("--server {}: give only the scheme, host and port (http://HOST:PORT)", url));
  }
  auto impl = std::make_unique<Impl>(url);
  if (!impl->client.is_valid())
    return make_error(ErrorKind::kUsage, fmt::format("--server {}: not a valid URL", url));
  impl->client.set_connection_timeout(std::chrono::seconds(3));
  impl->client.set_read_timeout(timeout);
  impl->client.set_write_timeout(std::chrono::seconds(10));
  if (!token.empty()) impl->client.set_bearer_token_auth(token);
  return std::unique_ptr<ApiClient>(new ApiClient(url, std::move(impl)));
}

namespace {

Result<ApiReply> reply_of(const httplib::Result& r, const std::string& url) {
  if (!r) {
    Error e = make_error(fmt::format("cannot reach the agent at {}: {} (is `eacgm serve` running?)", url,
                                     httplib::to_string(r.error())));
    // cpp-httplib says Read when no answer came within the read timeout.
    switch (r.error()) {
      case httplib::Error::ConnectionTimeout:
      case httplib::Error::Read:
        e.sys_errno = ETIMEDOUT;
        break;
      case httplib::Error::Connection:
        e.sys_errno = ECONNREFUSED;
        break;
      default:
        break;
    }
    return e;
  }
  ApiReply out;
  out.status = r->status;
  out.content_type = r->get_header_value("Content-Type");
  out.body = r->body;
  return out;
}

}  // namespace

Result<ApiReply> ApiClient::get(const std::string& path) { return reply_of(impl_->client.Get(path), url_); }

Result<ApiReply> ApiClient::get(const std::string& path, const Fields& params, const Fields& headers) {
  httplib::Params p(params.begin(), params.end());
  httplib::Headers h(headers.begin(), headers.end());
  return reply_of(impl_->client.Get(path, p, h), url_);
}

Result<ApiReply> ApiClient::post_json(const std::string& path, const std::string& body) {
  return reply_of(impl_->client.Post(path, body, "application/json"), url_);
}

std::string api_error_text(const ApiReply& reply) {
  auto doc = nlohmann::json::parse(reply.body, nullptr, false);
  if (!doc.is_discarded() && doc.is_object() && doc.contains("error") && doc["error"].is_string()) {
    return doc["error"].get<std::string>();
  }
  return reply.body.substr(0, reply.body.find('\n'));
}

}  // namespace eacgm::server
