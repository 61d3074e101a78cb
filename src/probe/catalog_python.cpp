// The Python catalog: CPython's USDT probes function__entry/function__return (built
// with --with-dtrace). Entry-only records; ingest/python_calls pairs them into calls.
#include "probe/catalog.h"

namespace eacgm::probe {
namespace {

// CPython passes (filename, funcname, lineno) to both probes. The function name is the
// spec's first string (record str, 64 bytes), the file its second (str2, 128 bytes).
ProbeSpec usdt_spec(const char* name, const char* usdt) {
  ProbeSpec s;
  s.name = name;
  s.domain = "python";
  // The interpreter executable (python3.11) or, for shared builds, libpython3.11.so.
  s.library = "*python3*";
  s.usdt = usdt;
  s.with_exit = false;
  s.ret = ReturnKind::kNone;
  s.args = {ArgSpec{"function", ArgSource::kUsdtArg, 1, ArgKind::kString, ArgFormat::kUnsigned, false, 0, 0},
            ArgSpec{"file", ArgSource::kUsdtArg, 0, ArgKind::kString, ArgFormat::kUnsigned, false, 0, 0},
            ArgSpec{"line", ArgSource::kUsdtArg, 2, ArgKind::kU32, ArgFormat::kSigned, false, 0, 0}};
  return s;
}

}  // namespace

Catalog python_catalog() {
  Catalog c{"python",
            "Python functions (CPython USDT function__entry/return; opt-in, fires on every "
            "Python call)",
            {}};
  c.specs.push_back(usdt_spec(kPythonEntrySpec, "python:function__entry"));
  c.specs.push_back(usdt_spec(kPythonReturnSpec, "python:function__return"));
  return c;
}

}  // namespace eacgm::probe
