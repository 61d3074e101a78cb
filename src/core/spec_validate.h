// Rules every probe spec must satisfy before it reaches the BPF spec map, whether it
// comes from a built-in catalog or from the user's config file.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/probe_spec.h"
#include "core/result.h"

namespace eacgm {

// One broken rule, located by the config key that holds the bad value so the config
// parser can point at a line while the rule itself lives in one place.
struct SpecViolation {
  int arg = -1;         // index into ProbeSpec::args, or -1 for the probe itself
  std::string key;      // config-file key of the bad value: "kind", "ret", "args", ...
  std::string message;  // what is wrong and what to do, without the probe/arg prefix
};

// The first rule `spec` breaks, or nothing when it is valid.
std::optional<SpecViolation> find_spec_violation(const ProbeSpec& spec);

// OK, or `probe "NAME": arg "ARG": what is wrong and what to do`.
Status validate_spec(const ProbeSpec& spec);

// The names the config file uses for these values ("deref_u64", "hex", "int32").
// Unknown enumerators (a cast gone wrong) come back as "?".
std::string_view arg_kind_name(ArgKind kind);
std::string_view arg_format_name(ArgFormat format);
std::string_view return_kind_name(ReturnKind ret);
std::string_view error_rule_name(ErrorRule rule);

// True for kinds that read memory through the captured word (the ones at_exit may use).
bool is_deref_kind(ArgKind kind);

}  // namespace eacgm
