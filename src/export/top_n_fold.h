// The series caps of /metrics and /api/v1: of rows ordered busiest first, the first
// `cap` keep their series and the rest fold into one `other` (or are only counted), so
// an answer stays bounded however many functions, kernels or processes a node runs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace eacgm::exporting {

// Keeps the first `cap` rows; each one after them goes to `fold`, in order, and is
// dropped. Returns how many were folded.
template <typename Row, typename Fold>
std::uint64_t fold_past_cap(std::vector<Row>& rows, std::size_t cap, Fold&& fold) {
  if (rows.size() <= cap) return 0;
  const auto first_folded = rows.begin() + static_cast<std::ptrdiff_t>(cap);
  for (auto it = first_folded; it != rows.end(); ++it) fold(std::as_const(*it));
  const std::uint64_t folded = rows.size() - cap;
  rows.erase(first_folded, rows.end());
  return folded;
}

// fold_past_cap after ordering the rows by `key`, largest first. Rows with equal keys
// keep their order, so equal figures keep the same series from one answer to the next.
template <typename Row, typename Key, typename Fold>
std::uint64_t fold_top_n(std::vector<Row>& rows, std::size_t cap, Key&& key, Fold&& fold) {
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) { return key(a) > key(b); });
  return fold_past_cap(rows, cap, fold);
}

// The fold of rows that are only counted: their series are left out.
inline constexpr auto leave_out = [](const auto&) {};

}  // namespace eacgm::exporting
