// Reading per-CPU maps and pruning the per-CPU hash maps that keep per-process
// statistics in the kernel (the always-on counts and durations, the host-wait
// histograms): one key folded over the CPUs, every key with its per-CPU values, and
// deleting the keys of processes that are gone.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace eacgm::probe {

// How many values a per-CPU map keeps for each key: one per possible CPU.
inline Result<std::size_t> possible_cpus() {
  const int n = libbpf_num_possible_cpus();
  if (n <= 0) return make_errno_error(n, "cannot count the possible CPUs");
  return static_cast<std::size_t>(n);
}

// One key's values of a per-CPU array or hash map, folded over the CPUs: `fold(acc, v)`
// for each CPU's value v.
template <typename Value, typename Key, typename Acc, typename Fold>
Result<Acc> fold_percpu(const bpf_map* map, const Key& key, Acc acc, Fold&& fold) {
  static_assert(sizeof(Value) % 8 == 0, "per-CPU values are laid out in 8-byte steps");
  auto cpus = possible_cpus();
  if (!cpus) return std::move(cpus).take_error();
  std::vector<Value> values(*cpus);
  if (bpf_map__lookup_elem(map, &key, sizeof key, values.data(), values.size() * sizeof(Value), 0) != 0) {
    const int err = errno;
    return make_errno_error(err,
                            std::string("cannot read map ") + bpf_map__name(map) + ": " + std::strerror(err));
  }
  for (const Value& v : values) fold(acc, v);
  return acc;
}

// One key's per-CPU counter, summed over the CPUs.
template <typename Key>
Result<std::uint64_t> sum_percpu(const bpf_map* map, const Key& key) {
  return fold_percpu<std::uint64_t>(map, key, std::uint64_t{0},
                                    [](std::uint64_t& sum, std::uint64_t v) { sum += v; });
}

// Every key and per-CPU value of a per-CPU hash map, a batch at a time (keys one by one
// where the kernel lacks batch lookups). `Value` is the per-CPU value type. False when a
// batch after the first failed: the keys past it were not read.
template <typename Key, typename Value, typename Fn>
bool read_percpu_hash(int fd, Fn&& each) {
  const auto possible = possible_cpus();
  if (!possible) return false;
  const std::size_t cpus = *possible;
  static_assert(sizeof(Value) % 8 == 0, "per-CPU values are laid out in 8-byte steps");
  constexpr std::uint32_t kBatch = 1024;
  std::vector<Key> keys(kBatch);
  std::vector<Value> values(kBatch * cpus);
  std::uint64_t in_batch = 0, out_batch = 0;
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  for (bool first = true;; first = false) {
    std::uint32_t n = kBatch;
    const int err = bpf_map_lookup_batch(fd, first ? nullptr : &in_batch, &out_batch, keys.data(),
                                         values.data(), &n, &opts);
    const int saved = errno;
    if (err != 0 && saved != ENOENT) {
      if (first) break;  // no batch lookups here: walk the keys instead
      return false;
    }
    for (std::uint32_t i = 0; i < n; ++i) each(keys[i], std::span<const Value>(&values[i * cpus], cpus));
    if (err != 0) return true;  // ENOENT: that was the last batch
    in_batch = out_batch;
  }
  Key key{}, next{};
  Key* prev = nullptr;
  std::vector<Value> one(cpus);
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    if (bpf_map_lookup_elem(fd, &next, one.data()) == 0) each(next, std::span<const Value>(one));
    key = next;
    prev = &key;
  }
  return true;
}

// Every key and value of a (not per-CPU) hash map, a batch at a time (keys one by one
// where the kernel lacks batch lookups). False when a batch after the first failed.
template <typename Key, typename Value, typename Fn>
bool read_hash(int fd, Fn&& each) {
  constexpr std::uint32_t kBatch = 256;
  std::vector<Key> keys(kBatch);
  std::vector<Value> values(kBatch);
  std::uint64_t in_batch = 0, out_batch = 0;
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  for (bool first = true;; first = false) {
    std::uint32_t n = kBatch;
    const int err = bpf_map_lookup_batch(fd, first ? nullptr : &in_batch, &out_batch, keys.data(),
                                         values.data(), &n, &opts);
    const int saved = errno;
    if (err != 0 && saved != ENOENT) {
      if (first) break;  // no batch lookups here: walk the keys instead
      return false;
    }
    for (std::uint32_t i = 0; i < n; ++i) each(keys[i], values[i]);
    if (err != 0) return true;  // ENOENT: that was the last batch
    in_batch = out_batch;
  }
  Key key{}, next{};
  Key* prev = nullptr;
  Value one{};
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    if (bpf_map_lookup_elem(fd, &next, &one) == 0) each(next, one);
    key = next;
    prev = &key;
  }
  return true;
}

// Deletes these keys of a map, a batch at a time (one by one where the kernel lacks batch
// deletes, and past a key already gone).
template <typename Key>
void delete_keys(int fd, std::vector<Key> keys) {
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  std::size_t at = 0;
  while (at < keys.size()) {
    auto n = static_cast<std::uint32_t>(keys.size() - at);
    if (bpf_map_delete_batch(fd, &keys[at], &n, &opts) == 0) return;
    if (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP) break;
    at += n + 1;  // keys[at + n] is the one that failed (already gone): skip it
  }
  for (; at < keys.size(); ++at) bpf_map_delete_elem(fd, &keys[at]);
}

// Deletes every key of a map whose `pid` field names one of `gone`.
template <typename Key>
void delete_keys_of(int fd, const std::set<std::uint32_t>& gone) {
  std::vector<Key> doomed;
  Key key{}, next{};
  Key* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    if (gone.contains(next.pid)) doomed.push_back(next);
    key = next;
    prev = &key;
  }
  for (const Key& k : doomed) bpf_map_delete_elem(fd, &k);
}

}  // namespace eacgm::probe
