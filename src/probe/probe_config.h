// The probes a configuration file enables and defines: `catalogs` (built-in catalogs by
// name) and `[[probe]]` (the user's own specs), each rule broken pointing at the key that
// broke it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/probe_spec.h"
#include "core/result.h"

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::probe {

// What `catalogs` names: distinct, non-empty names (left empty when absent: the default
// catalogs). A name that is no built-in catalog or probe keeps its error, made at its place
// in the file ("eacgm.toml:1:13: unknown catalog \"ncll\" (did you mean \"nccl\"?)..."),
// until check_catalog_names knows the file's [[probe]]s: it may name one, or their domain.
struct CatalogNames {
  std::vector<std::string> names;
  std::vector<std::pair<std::string, Error>> not_built_in;
};

// Adds `catalogs` to the file's sections, read into `catalogs`.
void add_catalogs_section(ConfigSections& sections, CatalogNames& catalogs);

// Once the whole file is read: the first name of `catalogs` that names nothing, neither
// built in nor among the user's `specs` (their names and domains), is the error.
Status check_catalog_names(const CatalogNames& catalogs, const std::vector<ProbeSpec>& specs);

// Adds `[[probe]]` to the file's sections: each table one spec, checked by the rules the
// built-in catalogs follow (core/spec_validate.h), read into `specs`.
void add_probe_section(ConfigSections& sections, std::vector<ProbeSpec>& specs);

}  // namespace eacgm::probe
