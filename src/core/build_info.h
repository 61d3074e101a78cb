// What build this is: the project's version and the commit it was built from (a
// "-dirty" suffix when the tree had changes; "unknown" outside a git checkout). Defined
// in a source the build generates (cmake/build_info.cmake).
#pragma once

#include <string_view>

namespace eacgm {

std::string_view build_version();
std::string_view build_commit();

}  // namespace eacgm
