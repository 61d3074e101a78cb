// Probe naming rules. The torch rule reads the Itanium-mangled name directly: the
// bindings all sit in namespace torch::autograd, so the op is one length-prefixed
// identifier after "_ZN5torch8autograd" (with an 'L' for internal linkage).
#include "probe/symbol_names.h"

#include <charconv>

#include "probe/library_match.h"

namespace eacgm::probe {
namespace {
constexpr std::string_view kTorchAutograd = "_ZN5torch8autograd";
constexpr std::string_view kBindingPrefix = "THPVariable_";
}  // namespace

std::string torch_op_name(std::string_view mangled) {
  if (mangled.substr(0, kTorchAutograd.size()) != kTorchAutograd) return {};
  std::string_view rest = mangled.substr(kTorchAutograd.size());
  if (!rest.empty() && rest[0] == 'L') rest.remove_prefix(1);  // static (local) function
  std::size_t len = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), len);
  if (ec != std::errc() || end == rest.data()) return {};
  rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
  if (len > rest.size()) return {};
  std::string_view ident = rest.substr(0, len);
  if (ident.substr(0, kBindingPrefix.size()) != kBindingPrefix || ident.size() == kBindingPrefix.size()) {
    return {};
  }
  return std::string(ident.substr(kBindingPrefix.size()));
}

std::string pattern_probe_name(NameRule rule, std::string_view symbol) {
  if (rule == NameRule::kTorchOp) return torch_op_name(symbol);
  return demangle(symbol);
}

}  // namespace eacgm::probe
