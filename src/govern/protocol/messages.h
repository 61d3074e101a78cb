// The messages between libeacgm_hook.so and eacgm-sched (docs/governance.md, "Protocol").
// Every message is a 16-byte header (magic "EAGV", version, type, payload length,
// request id; little-endian) and a payload of at most kMaxPayload bytes whose layout the
// type fixes. Version 1.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace eacgm::govern::protocol {

inline constexpr std::uint32_t kMagic = 0x56474145;  // "EAGV" as bytes on the wire
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::size_t kHeaderSize = 16;
inline constexpr std::uint32_t kMaxPayload = 512;
inline constexpr std::size_t kMaxNameLength = 64;     // tenant names
inline constexpr std::size_t kMaxSecretLength = 128;  // TCP secrets
inline constexpr std::uint16_t kMaxDevice = 63;

enum class MessageType : std::uint16_t {
  kHello = 1,         // client -> scheduler: who I am
  kHelloReply = 2,    // scheduler -> client: accepted, my tenant's limits
  kTokenRequest = 3,  // client -> scheduler: the previous slice's use, ask for the next
  kTokenGrant = 4,    // scheduler -> client: a slice of GPU time
  kMemReserve = 5,    // client -> scheduler: add to the tenant's memory account
  kMemReply = 6,      // scheduler -> client: granted or not, and the account
  kMemRelease = 7,    // client -> scheduler: subtract (no reply)
  kMemQuery = 8,      // client -> scheduler: the account (answered by kMemReply)
  kError = 9,         // scheduler -> client: the request was refused
};

enum class ErrorCode : std::uint16_t {
  kMalformed = 1,      // the message broke the protocol; the connection is closed
  kUnknownTenant = 2,  // no tenant of that name, or none for the peer's uid
  kNotAuthorized = 3,  // wrong secret, or the uid may not claim the tenant
  kUnsupportedVersion = 4,
  kBadDevice = 5,      // a device index the scheduler does not serve
  kNotIntroduced = 6,  // a request before kHello
};

struct Hello {
  std::uint32_t pid = 0;
  std::string tenant;  // may be empty over a Unix socket (the peer's uid decides)
  std::string secret;  // TCP only
};
struct HelloReply {
  std::string tenant;
  std::uint64_t memory_limit = 0;  // per GPU, bytes; 0: none
  std::uint32_t max_slice_us = 0;  // the longest slice the scheduler grants
};
struct TokenRequest {
  std::uint16_t device = 0;
  std::uint32_t used_us = 0;       // GPU time the previous slice took, overrun included
  std::uint32_t predicted_us = 0;  // the client's estimate of its next burst
};
struct TokenGrant {
  std::uint16_t device = 0;
  std::uint32_t slice_us = 0;
};
struct MemReserve {
  std::uint16_t device = 0;
  std::uint64_t bytes = 0;
};
struct MemReply {
  std::uint16_t device = 0;
  bool granted = false;
  std::uint64_t used = 0;   // the tenant's account after the request
  std::uint64_t limit = 0;  // 0: none
};
struct MemRelease {
  std::uint16_t device = 0;
  std::uint64_t bytes = 0;
};
struct MemQuery {
  std::uint16_t device = 0;
};
struct ErrorReply {
  ErrorCode code = ErrorCode::kMalformed;
  std::string message;
};

using Message = std::variant<Hello, HelloReply, TokenRequest, TokenGrant, MemReserve, MemReply, MemRelease,
                             MemQuery, ErrorReply>;

MessageType type_of(const Message& m);

}  // namespace eacgm::govern::protocol
