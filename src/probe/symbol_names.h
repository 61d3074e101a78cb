// Display names for probes found by symbol pattern: the demangled symbol, or a
// catalog's own rule (libtorch_python's op bindings become their op names).
#pragma once

#include <string>
#include <string_view>

#include "core/probe_spec.h"

namespace eacgm::probe {

// The name ProbeInfo::function gets for `symbol` matched by a spec with `rule`; ""
// when the rule rejects the symbol (a glob match that is not a torch op binding).
std::string pattern_probe_name(NameRule rule, std::string_view symbol);

// The op of a libtorch_python binding: "_ZN5torch8autogradL17THPVariable_geluEP7_objectS2_S2_"
// (torch::autograd::THPVariable_gelu) -> "gelu". "" when the symbol is not such a binding.
std::string torch_op_name(std::string_view mangled);

}  // namespace eacgm::probe
