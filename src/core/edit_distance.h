// How far apart two words are, and the one word of a list a mistyped word most likely
// meant: the "did you mean" of config keys and enum names.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace eacgm {

// Optimal-string-alignment distance, case-insensitive: a swapped pair of letters
// ("fromat") counts as one edit, the most common typo in key names.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The one candidate close enough to `word` to be what was meant (within one edit for
// names of up to 4 letters, a third of the name's length for longer ones); none when
// nothing is close or two candidates are equally close (a guess would mislead).
std::optional<std::string_view> closest_word(std::string_view word,
                                             std::span<const std::string_view> candidates);

}  // namespace eacgm
