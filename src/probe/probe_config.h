// The probes a configuration file enables and defines: `catalogs` (built-in catalogs by
// name) and `[[probe]]` (the user's own specs), each rule broken pointing at the key that
// broke it.
#pragma once

#include <string>
#include <vector>

#include "core/probe_spec.h"

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::probe {

// Adds `catalogs` to the file's sections: distinct, non-empty names, read into `catalogs`
// (left empty when absent: the default catalogs).
void add_catalogs_section(ConfigSections& sections, std::vector<std::string>& catalogs);

// Adds `[[probe]]` to the file's sections: each table one spec, checked by the rules the
// built-in catalogs follow (core/spec_validate.h), read into `specs`.
void add_probe_section(ConfigSections& sections, std::vector<ProbeSpec>& specs);

}  // namespace eacgm::probe
