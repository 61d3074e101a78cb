// libpq: connections, binary parameters and results, COPY, scrubbed messages.
#include "history/pg_conn.h"

#include <libpq-fe.h>

#include <algorithm>
#include <bit>
#include <regex>

#include "history/pg_wire.h"

namespace eacgm::history {
namespace {

// Type OIDs (catalog/pg_type.dat).
constexpr unsigned kBool = 16, kBytea = 17, kInt8 = 20, kInt2 = 21, kInt4 = 23, kText = 25, kFloat4 = 700,
                   kFloat8 = 701, kInt4Array = 1007, kTextArray = 1009, kInt8Array = 1016;

// One line: runs of white space (libpq's messages end in newlines and indent their
// details) become one space.
std::string one_line(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  bool space = false;
  for (char c : s) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// A connection string libpq could not parse: its message quotes the parts it choked on,
// which may be the password, so quoted parts go.
std::string without_quotes(const std::string& s) {
  static const std::regex quoted(R"("[^"]*")");
  return one_line(std::regex_replace(s, quoted, "\"...\""));
}

}  // namespace

std::vector<std::string> conninfo_secrets(const std::string& conninfo) {
  std::vector<std::string> out;
  auto add = [&out](std::string s) {
    if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  };
  char* err = nullptr;
  if (PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err)) {
    for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
      if (std::string_view(o->keyword) == "password" && o->val != nullptr) add(o->val);
    }
    PQconninfoFree(opts);
  }
  if (err != nullptr) PQfreemem(err);
  // As written: percent-encoded in a URL's user info or query, quoted in key=value.
  static const std::regex userinfo(R"(^[a-z]+://[^:/@]*:([^@]*)@)");
  static const std::regex key(R"(password\s*=\s*('([^']*)'|[^\s&]+))");
  std::smatch m;
  if (std::regex_search(conninfo, m, userinfo)) add(m[1].str());
  for (auto it = std::sregex_iterator(conninfo.begin(), conninfo.end(), key); it != std::sregex_iterator();
       ++it) {
    add((*it)[1].str());
    add((*it)[2].str());
  }
  // The longest first, so that no shorter one leaves a piece of a longer one showing.
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  return out;
}

PgParams& PgParams::add(unsigned type, std::string value, bool is_null) {
  types_.push_back(type);
  values_.push_back(std::move(value));
  nulls_.push_back(is_null);
  return *this;
}

PgParams& PgParams::i64(std::int64_t v) {
  std::string b;
  pg_wire::put(b, v);
  return add(kInt8, std::move(b));
}

PgParams& PgParams::i32(std::int32_t v) {
  std::string b;
  pg_wire::put(b, v);
  return add(kInt4, std::move(b));
}

PgParams& PgParams::f64(double v) {
  std::string b;
  pg_wire::put(b, std::bit_cast<std::int64_t>(v));
  return add(kFloat8, std::move(b));
}

PgParams& PgParams::text(std::string_view v) { return add(kText, std::string(v)); }
PgParams& PgParams::bytes(std::string_view v) { return add(kBytea, std::string(v)); }
PgParams& PgParams::null() { return add(0, std::string(), true); }

namespace {

// A one-dimensional array without NULLs in binary form.
template <class Each>
std::string array_of(unsigned element_type, std::size_t n, Each each) {
  std::string b;
  pg_wire::put<std::int32_t>(b, n == 0 ? 0 : 1);  // dimensions
  pg_wire::put<std::int32_t>(b, 0);               // no NULLs
  pg_wire::put<std::int32_t>(b, static_cast<std::int32_t>(element_type));
  if (n > 0) {
    pg_wire::put<std::int32_t>(b, static_cast<std::int32_t>(n));
    pg_wire::put<std::int32_t>(b, 1);  // lower bound
  }
  for (std::size_t i = 0; i < n; ++i) each(b, i);
  return b;
}

}  // namespace

PgParams& PgParams::text_array(const std::vector<std::string>& v) {
  return add(kTextArray, array_of(kText, v.size(), [&v](std::string& b, std::size_t i) {
               pg_wire::put(b, static_cast<std::int32_t>(v[i].size()));
               b.append(v[i]);
             }));
}

PgParams& PgParams::i32_array(const std::vector<std::int32_t>& v) {
  return add(kInt4Array, array_of(kInt4, v.size(), [&v](std::string& b, std::size_t i) {
               pg_wire::put<std::int32_t>(b, 4);
               pg_wire::put(b, v[i]);
             }));
}

PgParams& PgParams::i64_array(const std::vector<std::int64_t>& v) {
  return add(kInt8Array, array_of(kInt8, v.size(), [&v](std::string& b, std::size_t i) {
               pg_wire::put<std::int32_t>(b, 8);
               pg_wire::put(b, v[i]);
             }));
}

void PgResult::Clear::operator()(pg_result* r) const { PQclear(r); }

int PgResult::rows() const { return r_ ? PQntuples(r_.get()) : 0; }

bool PgResult::is_null(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }

std::int64_t PgResult::i64(int row, int col) const {
  if (is_null(row, col)) return 0;
  const char* p = PQgetvalue(r_.get(), row, col);
  switch (PQftype(r_.get(), col)) {
    case kInt8:
      return pg_wire::get<std::int64_t>(p);
    case kInt4:
      return pg_wire::get<std::int32_t>(p);
    case kInt2:
      return pg_wire::get<std::int16_t>(p);
    case kBool:
      return p[0] != 0 ? 1 : 0;
    case kFloat8:
    case kFloat4:
      return static_cast<std::int64_t>(f64(row, col));
    default:
      return 0;  // a query of this file casts its sums (numeric) to bigint
  }
}

double PgResult::f64(int row, int col) const {
  if (is_null(row, col)) return 0;
  const char* p = PQgetvalue(r_.get(), row, col);
  switch (PQftype(r_.get(), col)) {
    case kFloat8:
      return std::bit_cast<double>(pg_wire::get<std::int64_t>(p));
    case kFloat4:
      return std::bit_cast<float>(pg_wire::get<std::int32_t>(p));
    default:
      return static_cast<double>(i64(row, col));
  }
}

std::string PgResult::text(int row, int col) const {
  if (is_null(row, col)) return {};
  return {PQgetvalue(r_.get(), row, col), static_cast<std::size_t>(PQgetlength(r_.get(), row, col))};
}

std::span<const std::uint8_t> PgResult::bytes(int row, int col) const {
  if (is_null(row, col)) return {};
  return {reinterpret_cast<const std::uint8_t*>(PQgetvalue(r_.get(), row, col)),
          static_cast<std::size_t>(PQgetlength(r_.get(), row, col))};
}

Result<PgConn> PgConn::connect(const std::string& conninfo) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
  if (opts == nullptr) {
    std::string why = err != nullptr ? without_quotes(err) : std::string("not a connection string");
    if (err != nullptr) PQfreemem(err);
    return make_error(ErrorKind::kUsage, why);
  }
  PQconninfoFree(opts);
  // Defaults first: the connection string's own settings, expanded from `dbname`, win.
  const char* keys[] = {"connect_timeout",
                        "keepalives_idle",
                        "keepalives_interval",
                        "keepalives_count",
                        "tcp_user_timeout",
                        "fallback_application_name",
                        "dbname",
                        nullptr};
  const char* values[] = {"10", "30", "10", "3", "60000", "eacgm", conninfo.c_str(), nullptr};
  PgConn conn(PQconnectdbParams(keys, values, 1), conninfo_secrets(conninfo));
  if (conn.c_ == nullptr) return make_error("libpq: out of memory");
  if (PQstatus(conn.c_) != CONNECTION_OK) return make_error(conn.message());
  return conn;
}

PgConn::PgConn(PgConn&& o) noexcept : c_(o.c_), secrets_(std::move(o.secrets_)), sent_(o.sent_) {
  o.c_ = nullptr;
}

PgConn& PgConn::operator=(PgConn&& o) noexcept {
  if (this != &o) {
    if (c_ != nullptr) PQfinish(c_);
    c_ = o.c_;
    secrets_ = std::move(o.secrets_);
    sent_ = o.sent_;
    o.c_ = nullptr;
  }
  return *this;
}

PgConn::~PgConn() {
  if (c_ != nullptr) PQfinish(c_);
}

bool PgConn::ok() const { return c_ != nullptr && PQstatus(c_) == CONNECTION_OK; }

bool PgConn::in_transaction() const {
  if (c_ == nullptr) return false;
  const PGTransactionStatusType t = PQtransactionStatus(c_);
  return t == PQTRANS_INTRANS || t == PQTRANS_INERROR;
}

Status PgConn::reset() {
  if (c_ == nullptr) return make_error("no connection");
  PQreset(c_);
  if (!ok()) return make_error(message());
  return {};
}

std::string PgConn::scrub(std::string text) const {
  for (const auto& s : secrets_) {
    for (auto at = text.find(s); at != std::string::npos; at = text.find(s, at + 3))
      text.replace(at, s.size(), "***");
  }
  return one_line(text);
}

std::string PgConn::message() const {
  if (c_ == nullptr) return "no connection";
  std::string m = scrub(PQerrorMessage(c_));
  return m.empty() ? std::string("connection failed") : m;
}

namespace {

struct RawParams {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  std::vector<Oid> types;
};

}  // namespace

Status PgConn::send(const std::string& sql, const PgParams& p) {
  RawParams raw;
  sent_ += sql.size();
  for (std::size_t i = 0; i < p.size(); ++i) {
    sent_ += p.values_[i].size();
    raw.values.push_back(p.nulls_[i] ? nullptr : p.values_[i].data());
    raw.lengths.push_back(static_cast<int>(p.values_[i].size()));
    raw.formats.push_back(1);
    raw.types.push_back(p.types_[i]);
  }
  if (PQsendQueryParams(c_, sql.c_str(), static_cast<int>(p.size()), raw.types.data(), raw.values.data(),
                        raw.lengths.data(), raw.formats.data(), 1) != 1) {
    return make_error(message());
  }
  return {};
}

Result<PgResult> PgConn::query(const std::string& sql, const PgParams& params) {
  if (c_ == nullptr) return make_error("no connection");
  if (auto st = send(sql, params); !st) return std::move(st).take_error();
  PgResult out;
  std::string error;
  while (pg_result* r = PQgetResult(c_)) {
    const auto status = PQresultStatus(r);
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) {
      out = PgResult(r);
    } else {
      if (error.empty()) error = scrub(PQresultErrorMessage(r));
      PQclear(r);
    }
  }
  if (!error.empty()) return make_error(error);
  if (!ok()) return make_error(message());
  return out;
}

Status PgConn::exec(const std::string& sql, const PgParams& params) {
  auto r = query(sql, params);
  if (!r) return std::move(r).take_error();
  return {};
}

Status PgConn::script(const std::string& sql) {
  if (c_ == nullptr) return make_error("no connection");
  sent_ += sql.size();
  pg_result* r = PQexec(c_, sql.c_str());
  const auto status = PQresultStatus(r);
  std::string error = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK
                          ? std::string()
                          : scrub(PQresultErrorMessage(r));
  PQclear(r);
  if (!error.empty()) return make_error(error);
  if (!ok()) return make_error(message());
  return {};
}

Status PgConn::each_row(const std::string& sql, const PgParams& params,
                        const std::function<void(const PgResult&)>& fn) {
  if (c_ == nullptr) return make_error("no connection");
  if (auto st = send(sql, params); !st) return st;
  PQsetSingleRowMode(c_);
  std::string error;
  while (pg_result* r = PQgetResult(c_)) {
    const auto status = PQresultStatus(r);
    if (status == PGRES_SINGLE_TUPLE) {
      PgResult row(r);
      if (error.empty()) fn(row);
    } else {
      if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK && error.empty()) {
        error = scrub(PQresultErrorMessage(r));
      }
      PQclear(r);
    }
  }
  if (!error.empty()) return make_error(error);
  if (!ok()) return make_error(message());
  return {};
}

Status PgConn::copy_in(const std::string& copy_sql, const std::string& data) {
  if (c_ == nullptr) return make_error("no connection");
  sent_ += copy_sql.size() + data.size();
  pg_result* start = PQexec(c_, copy_sql.c_str());
  const bool copying = PQresultStatus(start) == PGRES_COPY_IN;
  std::string error = copying ? std::string() : scrub(PQresultErrorMessage(start));
  PQclear(start);
  if (!copying) return make_error(error.empty() ? message() : error);
  if (PQputCopyData(c_, data.data(), static_cast<int>(data.size())) != 1 || PQputCopyEnd(c_, nullptr) != 1) {
    error = message();
  }
  while (pg_result* r = PQgetResult(c_)) {
    if (PQresultStatus(r) != PGRES_COMMAND_OK && error.empty()) error = scrub(PQresultErrorMessage(r));
    PQclear(r);
  }
  if (!error.empty()) return make_error(error);
  if (!ok()) return make_error(message());
  return {};
}

}  // namespace eacgm::history
