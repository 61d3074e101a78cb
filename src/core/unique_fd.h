// UniqueFd: the one owner of a file descriptor, closed when the owner goes, so every
// early return of code that opens something closes it.
#pragma once

#include <unistd.h>

#include <utility>

namespace eacgm {

class UniqueFd {
 public:
  UniqueFd() = default;
  // Takes `fd` (negative: owns nothing).
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Gives the descriptor up unclosed, to an owner that closes it itself.
  [[nodiscard]] int release() { return std::exchange(fd_, -1); }
  // Closes the descriptor held, if any, and takes `fd`.
  void reset(int fd = -1) {
    const int old = std::exchange(fd_, fd);
    // Not retried on EINTR: Linux frees the number even then, and it may be another's by now.
    if (old >= 0) ::close(old);
  }

 private:
  int fd_ = -1;
};

}  // namespace eacgm
