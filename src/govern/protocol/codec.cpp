// Little-endian field writers and bounds-checked readers for the protocol's payloads.
#include "govern/protocol/codec.h"

#include <cstring>
#include <type_traits>

namespace eacgm::govern::protocol {
namespace {

class Writer {
 public:
  Writer(std::uint8_t* p, std::size_t cap) : p_(p), cap_(cap) {}
  template <typename T>
  void put(T v) {
    static_assert(std::is_unsigned_v<T>);
    for (std::size_t i = 0; i < sizeof(T); ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void str(const std::string& s, std::size_t max) {
    if (s.size() > max) {
      ok_ = false;
      return;
    }
    put(static_cast<std::uint8_t>(s.size()));
    for (char c : s) byte(static_cast<std::uint8_t>(c));
  }
  std::size_t size() const { return n_; }
  bool ok() const { return ok_; }

 private:
  void byte(std::uint8_t b) {
    if (n_ >= cap_) {
      ok_ = false;
      return;
    }
    p_[n_++] = b;
  }
  std::uint8_t* p_;
  std::size_t cap_;
  std::size_t n_ = 0;
  bool ok_ = true;
};

class Reader {
 public:
  Reader(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  template <typename T>
  T get() {
    static_assert(std::is_unsigned_v<T>);
    if (n_ - pos_ < sizeof(T)) {
      ok_ = false;
      return 0;
    }
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      v = static_cast<T>(v | (static_cast<T>(p_[pos_ + i]) << (8 * i)));
    pos_ += sizeof(T);
    return v;
  }
  // A length byte and that many printable ASCII bytes (0x20..0x7e).
  std::string str(std::size_t max) {
    std::size_t len = get<std::uint8_t>();
    if (!ok_ || len > max || n_ - pos_ < len) {
      ok_ = false;
      return {};
    }
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    for (char c : s) {
      if (c < 0x20 || c > 0x7e) ok_ = false;
    }
    pos_ += len;
    return s;
  }
  std::uint16_t device() {
    auto d = get<std::uint16_t>();
    if (d > kMaxDevice) ok_ = false;
    return d;
  }
  bool boolean() {
    auto b = get<std::uint8_t>();
    if (b > 1) ok_ = false;
    return b == 1;
  }
  // Every byte consumed, every field valid.
  bool done() const { return ok_ && pos_ == n_; }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

void write_payload(Writer& w, const Message& m) {
  if (auto* h = std::get_if<Hello>(&m)) {
    w.put(h->pid);
    w.str(h->tenant, kMaxNameLength);
    w.str(h->secret, kMaxSecretLength);
  } else if (auto* r = std::get_if<HelloReply>(&m)) {
    w.str(r->tenant, kMaxNameLength);
    w.put(r->memory_limit);
    w.put(r->max_slice_us);
  } else if (auto* t = std::get_if<TokenRequest>(&m)) {
    w.put(t->device);
    w.put(t->used_us);
    w.put(t->predicted_us);
  } else if (auto* g = std::get_if<TokenGrant>(&m)) {
    w.put(g->device);
    w.put(g->slice_us);
  } else if (auto* mr = std::get_if<MemReserve>(&m)) {
    w.put(mr->device);
    w.put(mr->bytes);
  } else if (auto* rep = std::get_if<MemReply>(&m)) {
    w.put(rep->device);
    w.put(static_cast<std::uint8_t>(rep->granted ? 1 : 0));
    w.put(rep->used);
    w.put(rep->limit);
  } else if (auto* rel = std::get_if<MemRelease>(&m)) {
    w.put(rel->device);
    w.put(rel->bytes);
  } else if (auto* q = std::get_if<MemQuery>(&m)) {
    w.put(q->device);
  } else if (auto* e = std::get_if<ErrorReply>(&m)) {
    w.put(static_cast<std::uint16_t>(e->code));
    w.str(e->message, 255);
  }
}

bool read_payload(MessageType type, Reader& r, Message* out) {
  switch (type) {
    case MessageType::kHello: {
      Hello h;
      h.pid = r.get<std::uint32_t>();
      h.tenant = r.str(kMaxNameLength);
      h.secret = r.str(kMaxSecretLength);
      *out = std::move(h);
      break;
    }
    case MessageType::kHelloReply: {
      HelloReply h;
      h.tenant = r.str(kMaxNameLength);
      h.memory_limit = r.get<std::uint64_t>();
      h.max_slice_us = r.get<std::uint32_t>();
      *out = std::move(h);
      break;
    }
    case MessageType::kTokenRequest: {
      TokenRequest t;
      t.device = r.device();
      t.used_us = r.get<std::uint32_t>();
      t.predicted_us = r.get<std::uint32_t>();
      *out = t;
      break;
    }
    case MessageType::kTokenGrant: {
      TokenGrant g;
      g.device = r.device();
      g.slice_us = r.get<std::uint32_t>();
      *out = g;
      break;
    }
    case MessageType::kMemReserve: {
      MemReserve m;
      m.device = r.device();
      m.bytes = r.get<std::uint64_t>();
      *out = m;
      break;
    }
    case MessageType::kMemReply: {
      MemReply m;
      m.device = r.device();
      m.granted = r.boolean();
      m.used = r.get<std::uint64_t>();
      m.limit = r.get<std::uint64_t>();
      *out = m;
      break;
    }
    case MessageType::kMemRelease: {
      MemRelease m;
      m.device = r.device();
      m.bytes = r.get<std::uint64_t>();
      *out = m;
      break;
    }
    case MessageType::kMemQuery: {
      MemQuery m;
      m.device = r.device();
      *out = m;
      break;
    }
    case MessageType::kError: {
      ErrorReply e;
      auto code = r.get<std::uint16_t>();
      if (code < 1 || code > 6) return false;
      e.code = static_cast<ErrorCode>(code);
      e.message = r.str(255);
      *out = std::move(e);
      break;
    }
    default:
      return false;
  }
  return r.done();
}

std::uint32_t le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}
std::uint16_t le16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] | p[1] << 8); }

}  // namespace

MessageType type_of(const Message& m) { return static_cast<MessageType>(m.index() + 1); }

bool encode(const Message& m, std::uint32_t request_id, Frame* out) {
  Writer payload(out->bytes + kHeaderSize, kMaxPayload);
  write_payload(payload, m);
  if (!payload.ok()) return false;
  Writer header(out->bytes, kHeaderSize);
  header.put(kMagic);
  header.put(kVersion);
  header.put(static_cast<std::uint16_t>(type_of(m)));
  header.put(static_cast<std::uint32_t>(payload.size()));
  header.put(request_id);
  out->size = kHeaderSize + payload.size();
  return true;
}

DecodeStatus decode(const std::uint8_t* data, std::size_t size, Decoded* out) {
  // The magic is checked on whatever prefix has arrived, so garbage is refused at once.
  static const std::uint8_t kMagicBytes[4] = {0x45, 0x41, 0x47, 0x56};
  if (std::memcmp(data, kMagicBytes, size < 4 ? size : 4) != 0) return DecodeStatus::kBadMagic;
  if (size < kHeaderSize) return DecodeStatus::kNeedMore;
  if (le16(data + 4) != kVersion) return DecodeStatus::kBadVersion;
  std::uint16_t type = le16(data + 6);
  if (type < 1 || type > 9) return DecodeStatus::kBadType;
  std::uint32_t length = le32(data + 8);
  if (length > kMaxPayload) return DecodeStatus::kTooLong;
  if (size - kHeaderSize < length) return DecodeStatus::kNeedMore;
  Reader r(data + kHeaderSize, length);
  if (!read_payload(static_cast<MessageType>(type), r, &out->message)) return DecodeStatus::kBadPayload;
  out->request_id = le32(data + 12);
  out->consumed = kHeaderSize + length;
  return DecodeStatus::kOk;
}

const char* describe(DecodeStatus s) {
  switch (s) {
    case DecodeStatus::kOk:
      return "ok";
    case DecodeStatus::kNeedMore:
      return "incomplete message";
    case DecodeStatus::kBadMagic:
      return "not an eacgm governance message (bad magic)";
    case DecodeStatus::kBadVersion:
      return "unsupported protocol version (this side speaks version 1)";
    case DecodeStatus::kBadType:
      return "unknown message type";
    case DecodeStatus::kTooLong:
      return "payload longer than the protocol allows";
    case DecodeStatus::kBadPayload:
      return "payload does not match its message type";
  }
  return "unknown decode status";
}

}  // namespace eacgm::govern::protocol
