// Edit distance and the closest candidate, for suggestions after a typo.
#include "core/edit_distance.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

namespace eacgm {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  const std::size_t w = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * w);
  for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      std::size_t best =
          std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
        best = std::min(best, d[(i - 2) * w + j - 2] + 1);
      }
      d[i * w + j] = best;
    }
  }
  return d[a.size() * w + b.size()];
}

std::optional<std::string_view> closest_word(std::string_view word,
                                             std::span<const std::string_view> candidates) {
  std::optional<std::string_view> best;
  std::size_t best_d = SIZE_MAX;
  bool tie = false;
  for (std::string_view c : candidates) {
    std::size_t limit = c.size() <= 4 ? 1 : std::max<std::size_t>(2, c.size() / 3);
    std::size_t d = edit_distance(word, c);
    if (d > limit) continue;
    if (d < best_d) {
      best = c;
      best_d = d;
      tie = false;
    } else if (d == best_d) {
      tie = true;
    }
  }
  if (tie) return std::nullopt;
  return best;
}

}  // namespace eacgm
