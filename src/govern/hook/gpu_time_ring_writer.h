// The hook's end of the GPU-time ring (core/gpu_time_ring.h): creates
// /dev/shm/eacgm-gpu-time.<pid>, writes records (one thread: the timing thread), and
// removes the file at exit. Never waits: a full ring drops the record and counts it.
#pragma once

#include <cstdint>

#include "core/gpu_time_ring.h"

namespace eacgm::govern::hook {

class GpuTimeRingWriter {
 public:
  // False (and the hook goes on without GPU time) when the file cannot be made.
  bool open();
  bool is_open() const { return header_ != nullptr; }
  gpu_time::Header* header() { return header_; }
  // Writes one record, and `text` in the slots after it for a name record.
  bool write(const gpu_time::Record& r, const char* text = nullptr);
  // Writes a kernel span and its shape in the slot after it.
  bool write(const gpu_time::Record& r, const gpu_time::LaunchShape& shape);
  // Writes a memory call and its payload in the slot after it.
  bool write(const gpu_time::Record& r, const gpu_time::MemoryPayload& payload);
  // Removes the file (the agent keeps reading its mapping until it lets go).
  void remove();
  // In a child after fork: the parent's ring is not ours.
  void forget();

 private:
  // The record, then `bytes` of `payload` in the slots after it (zero-padded).
  bool write_with(const gpu_time::Record& r, const void* payload, std::uint32_t bytes);

  gpu_time::Header* header_ = nullptr;
  gpu_time::Record* slots_ = nullptr;
  char path_[64] = {};
};

}  // namespace eacgm::govern::hook
