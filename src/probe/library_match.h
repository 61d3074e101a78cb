// Matching probe specs' library patterns against mapped files, and readable C++ names.
#pragma once

#include <string>
#include <string_view>

namespace eacgm::probe {

// fnmatch glob on the file's basename: "libcudart.so*" matches
// "/opt/venv/.../nvidia/cu13/lib/libcudart.so.13". A glob containing '/' is matched
// against the whole path instead (to pin one installation).
bool library_matches(std::string_view glob, std::string_view path);

// "_ZN2at4_ops3add4callEv" -> "at::_ops::add::call()"; returns the input unchanged when it
// is not an Itanium-mangled name (or does not demangle). A GNU version suffix ("@V1") is kept.
std::string demangle(std::string_view mangled);

}  // namespace eacgm::probe
