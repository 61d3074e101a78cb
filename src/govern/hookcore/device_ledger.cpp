// Lock-free per-device accounting (compare-and-swap), so allocations on different
// threads never wait on each other.
#include "govern/hookcore/device_ledger.h"

#include <algorithm>

namespace eacgm::govern {

MemoryView limited_view(std::uint64_t limit, std::uint64_t used, std::uint64_t real_free,
                        std::uint64_t real_total) {
  if (limit == kNoLimit) return {real_free, real_total};
  MemoryView v;
  v.total = std::min(limit, real_total == 0 ? limit : real_total);
  // Usage past the limit (allocations made before it was known, or a pitch rounding)
  // leaves nothing free: the subtraction must not wrap.
  std::uint64_t left = used >= v.total ? 0 : v.total - used;
  v.free = std::min(left, real_free);
  return v;
}

void DeviceLedger::set_limit(int device, std::uint64_t limit) {
  if (valid(device)) devices_[device].limit.store(limit, std::memory_order_relaxed);
}

std::uint64_t DeviceLedger::limit(int device) const {
  return valid(device) ? devices_[device].limit.load(std::memory_order_relaxed) : kNoLimit;
}

std::uint64_t DeviceLedger::used(int device) const {
  return valid(device) ? devices_[device].used.load(std::memory_order_relaxed) : 0;
}

bool DeviceLedger::try_reserve(int device, std::uint64_t bytes) {
  if (!valid(device)) return true;
  Device& d = devices_[device];
  std::uint64_t limit = d.limit.load(std::memory_order_relaxed);
  std::uint64_t used = d.used.load(std::memory_order_relaxed);
  for (;;) {
    if (limit != kNoLimit && (bytes > limit || used > limit - bytes)) return false;
    if (d.used.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed)) return true;
  }
}

void DeviceLedger::add(int device, std::uint64_t bytes) {
  if (valid(device)) devices_[device].used.fetch_add(bytes, std::memory_order_relaxed);
}

void DeviceLedger::release(int device, std::uint64_t bytes) {
  if (!valid(device)) return;
  std::atomic<std::uint64_t>& used = devices_[device].used;
  std::uint64_t cur = used.load(std::memory_order_relaxed);
  while (!used.compare_exchange_weak(cur, cur >= bytes ? cur - bytes : 0, std::memory_order_relaxed)) {
  }
}

void DeviceLedger::clear_usage() {
  for (Device& d : devices_) d.used.store(0, std::memory_order_relaxed);
}

}  // namespace eacgm::govern
