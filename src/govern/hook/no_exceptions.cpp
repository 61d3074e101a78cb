// The hook is built without exceptions, but libstdc++'s containers still call
// std::__throw_* on the impossible paths (allocation failure, a mutex that cannot be
// locked). These definitions replace libstdc++'s, so its exception classes and the
// string and random-device code they drag in (which need glibc 2.36) are never linked
// into libeacgm_hook.so. Reaching one is a fatal error in the hook: it says so and
// aborts rather than unwind through the program's frames.
#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void fatal(const char* what) {
  std::fprintf(stderr, "eacgm hook: fatal: %s\n", what);
  std::abort();
}

}  // namespace

// NOLINTBEGIN(readability-identifier-naming,bugprone-reserved-identifier): libstdc++'s names
namespace std {

void __throw_bad_alloc() { fatal("out of memory"); }
void __throw_bad_array_new_length() { fatal("bad array length"); }
void __throw_length_error(const char* what) { fatal(what); }
void __throw_logic_error(const char* what) { fatal(what); }
void __throw_out_of_range_fmt(const char* what, ...) { fatal(what); }
void __throw_system_error(int) { fatal("a system call inside the C++ runtime failed"); }
void __throw_bad_variant_access(const char* what) { fatal(what); }
void __throw_bad_function_call() { fatal("bad function call"); }

}  // namespace std
// NOLINTEND(readability-identifier-naming,bugprone-reserved-identifier)
