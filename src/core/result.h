// Result<T>: a value or a message a user can act on. Errors travel as values;
// nothing in eacgm throws across threads.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace eacgm {

// What kind of failure, so a caller can branch (a command maps it to an exit code)
// without reading the message.
enum class ErrorKind {
  kFailure,  // the operation failed (system, BPF, attach)
  kUsage,    // the request itself is wrong (a bad option, probe name or pid)
  kLaunch,   // the command to trace could not be started
};

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::kFailure;
  // The system call's errno when one failed (ENOENT, EPERM, ...), so a caller can tell a
  // missing file from a refusal without parsing the words; 0 otherwise.
  int sys_errno = 0;
};

inline Error make_error(std::string message) { return Error{std::move(message)}; }
inline Error make_error(ErrorKind kind, std::string message) { return Error{std::move(message), kind}; }
// `err`: an errno, or a libbpf error (the negated errno), kept as the errno.
inline Error make_errno_error(ErrorKind kind, int err, std::string message) {
  return Error{std::move(message), kind, err < 0 ? -err : err};
}
inline Error make_errno_error(int err, std::string message) {
  return make_errno_error(ErrorKind::kFailure, err, std::move(message));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const std::string& error() const { return std::get<Error>(v_).message; }
  ErrorKind error_kind() const { return std::get<Error>(v_).kind; }
  int error_errno() const { return std::get<Error>(v_).sys_errno; }
  Error take_error() && { return std::get<Error>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or a message.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error)  // NOLINT(google-explicit-constructor)
      : error_(std::move(error.message)), kind_(error.kind), errno_(error.sys_errno), failed_(true) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return error_; }
  ErrorKind error_kind() const { return kind_; }
  int error_errno() const { return errno_; }
  Error take_error() && { return Error{std::move(error_), kind_, errno_}; }

 private:
  std::string error_;
  ErrorKind kind_ = ErrorKind::kFailure;
  int errno_ = 0;
  bool failed_ = false;
};

using Status = Result<void>;

}  // namespace eacgm
