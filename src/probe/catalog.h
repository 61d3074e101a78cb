// Built-in probe catalogs: named sets of probe specs (`cuda`, later `cuda_driver`,
// `nccl`, `torch`, `python`), and the selection of specs from names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/probe_spec.h"
#include "core/result.h"

namespace eacgm::probe {

struct Catalog {
  std::string name;
  std::string description;
  std::vector<ProbeSpec> specs;
};

const std::vector<Catalog>& builtin_catalogs();

// Catalogs enabled when neither --probes nor the config names any.
std::vector<std::string> default_catalog_names();

// Resolves names (catalog names or individual spec names, from built-ins and the
// user's specs) to the specs to attach. Unknown names are an error naming them.
Result<std::vector<ProbeSpec>> select_specs(const std::vector<std::string>& names,
                                            const std::vector<ProbeSpec>& user_specs);

// One catalog per file: catalog_<name>.cpp.
Catalog cuda_runtime_catalog();
Catalog cuda_driver_catalog();
Catalog nccl_catalog();
Catalog python_catalog();
// The raw USDT specs of the python catalog; ingest pairs their records into calls.
inline constexpr const char* kPythonEntrySpec = "python_function_entry";
inline constexpr const char* kPythonReturnSpec = "python_function_return";
// The python catalog's frame-reading spec (interpreters without USDT probes): entry and
// return records of _PyEval_EvalFrameDefault, which ingest pairs into calls.
inline constexpr const char* kPythonFrameSpec = "python_frame";
Catalog torch_catalog();

}  // namespace eacgm::probe
