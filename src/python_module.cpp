// The `eacgm._eacgm` extension module: the agent run from Python (python/eacgm wraps it).
// Calls reach Python in batches, packed on the reader thread (src/pybind/call_queue.h);
// every wait releases the GIL and wakes every 50 ms to let Ctrl-C through.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/build_info.h"
#include "probe/bpf_tracer.h"
#include "pybind/call_queue.h"
#include "pybind/gpu_reader.h"
#include "pybind/node_handle.h"
#include "pybind/trace_handle.h"
#include "sample/nvml_api.h"

namespace py = pybind11;
using eacgm::ErrorKind;
using eacgm::node::NodeAgent;
using eacgm::pybind::CallRecord;
using eacgm::pybind::TraceArgs;
using eacgm::pybind::TraceHandle;

namespace {

// The module's exception classes (made once at import).
PyObject* g_error = nullptr;
PyObject* g_usage = nullptr;
PyObject* g_launch = nullptr;
PyObject* g_privilege = nullptr;
PyObject* g_nvml = nullptr;

struct StartError {
  eacgm::Error error;
};
struct NvmlError {
  std::string message;
};

template <typename T>
py::object opt(const std::optional<T>& v) {
  return v ? py::cast(*v) : py::none();
}

// The environment the agent's stages honour, read here (at the call, so a variable set in
// os.environ after the import counts) and handed down as options.
std::string environment_value(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// A trace's or an agent's arguments (TraceArgs, NodeArgs) get the same variables.
template <typename Args>
void read_environment(Args& args) {
  if (const char* path = std::getenv("PATH")) args.search_path = path;
  args.nvml_library = environment_value(eacgm::sample::nvml::kLibraryEnv);
  args.duty = eacgm::agent::duty_overrides(std::getenv);
  eacgm::probe::set_libbpf_debug(std::getenv("EACGM_LIBBPF_DEBUG") != nullptr);
}

std::unique_ptr<eacgm::pybind::GpuReader> open_gpus(double first_window_s) {
  auto reader = eacgm::pybind::GpuReader::open(
      std::chrono::microseconds(static_cast<std::int64_t>(first_window_s * 1e6)),
      environment_value(eacgm::sample::nvml::kLibraryEnv));
  if (!reader) throw NvmlError{reader.error()};
  return std::move(*reader);
}

py::list device_dicts(eacgm::pybind::GpuReader& r) {
  eacgm::sample::DevicePass pass;
  {
    py::gil_scoped_release release;
    pass = r.devices();
  }
  py::list out;
  for (const auto& d : pass.devices) {
    py::dict x;
    x["index"] = d.index;
    x["name"] = d.name;
    x["uuid"] = d.uuid;
    x["lost"] = d.lost;
    x["utilization_gpu_percent"] = opt(d.utilization_gpu_percent);
    x["utilization_memory_percent"] = opt(d.utilization_memory_percent);
    x["memory_total_bytes"] = opt(d.memory_total_bytes);
    x["memory_used_bytes"] = opt(d.memory_used_bytes);
    x["encoder_utilization_percent"] = opt(d.encoder_utilization_percent);
    x["decoder_utilization_percent"] = opt(d.decoder_utilization_percent);
    x["temperature_gpu_celsius"] = opt(d.temperature_gpu_celsius);
    x["fan_speed_percent"] = opt(d.fan_speed_percent);
    x["power_usage_milliwatts"] = opt(d.power_usage_milliwatts);
    x["power_limit_milliwatts"] = opt(d.power_limit_milliwatts);
    // GPM's activities (ratios) since the previous call; None without GPM, or on a call
    // sooner than 100 ms after the previous one.
    x["sm_active"] = d.gpm ? opt(d.gpm->sm_active) : py::object(py::none());
    x["tensor_active"] = d.gpm ? opt(d.gpm->tensor_active) : py::object(py::none());
    x["dram_active"] = d.gpm ? opt(d.gpm->dram_active) : py::object(py::none());
    out.append(std::move(x));
  }
  return out;
}

py::list process_dicts(eacgm::pybind::GpuReader& r) {
  eacgm::sample::ProcessPass pass;
  {
    py::gil_scoped_release release;
    pass = r.processes();
  }
  py::list out;
  for (const auto& p : pass.processes) {
    py::dict x;
    x["pid"] = p.pid;
    x["gpu_index"] = p.gpu_index;
    x["name"] = p.name;
    x["used_memory_bytes"] = opt(p.used_memory_bytes);
    x["sm_utilization_percent"] = opt(p.sm_utilization_percent);
    x["memory_utilization_percent"] = opt(p.memory_utilization_percent);
    x["encoder_utilization_percent"] = opt(p.encoder_utilization_percent);
    x["decoder_utilization_percent"] = opt(p.decoder_utilization_percent);
    out.append(std::move(x));
  }
  return out;
}

constexpr auto kSlice = std::chrono::milliseconds(50);

// Waits for `ready` (called without the GIL) up to `timeout_s` (< 0: no limit), waking
// every slice to run Python's signal handlers: a KeyboardInterrupt ends the wait.
template <typename Ready>
bool wait_interruptibly(double timeout_s, Ready ready) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s < 0 ? 1e9 : timeout_s);
  for (;;) {
    bool done = false;
    {
      py::gil_scoped_release release;
      done = ready();
    }
    if (done) return true;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
}

std::vector<CallRecord> take(TraceHandle& h, std::size_t max, double timeout_s) {
  std::vector<CallRecord> out;
  wait_interruptibly(timeout_s, [&] {
    out = h.queue().take(max, kSlice);
    return !out.empty() || h.queue().drained();
  });
  return out;
}

py::bytes take_records(TraceHandle& h, std::size_t max, double timeout_s) {
  auto records = take(h, max, timeout_s);
  return {reinterpret_cast<const char*>(records.data()), records.size() * sizeof(CallRecord)};
}

// Interned key strings, made once (they live as long as the interpreter).
struct Keys {
  PyObject* function = PyUnicode_InternFromString("function");
  PyObject* domain = PyUnicode_InternFromString("domain");
  PyObject* pid = PyUnicode_InternFromString("pid");
  PyObject* tid = PyUnicode_InternFromString("tid");
  PyObject* comm = PyUnicode_InternFromString("comm");
  PyObject* ts_ns = PyUnicode_InternFromString("ts_ns");
  PyObject* dur_ns = PyUnicode_InternFromString("dur_ns");
  PyObject* ret = PyUnicode_InternFromString("ret");
  PyObject* nested = PyUnicode_InternFromString("nested");
  PyObject* args = PyUnicode_InternFromString("args");
};

// Sets d[key] = value, taking the reference to `value`.
void set_new(PyObject* d, PyObject* key, PyObject* value) {
  if (value == nullptr) throw py::error_already_set();
  int rc = PyDict_SetItem(d, key, value);
  Py_DECREF(value);
  if (rc != 0) throw py::error_already_set();
}

void set_borrowed(PyObject* d, PyObject* key, PyObject* value) {
  if (PyDict_SetItem(d, key, value) != 0) throw py::error_already_set();
}

py::list take_dicts(TraceHandle& h, std::size_t max, double timeout_s) {
  static const Keys* keys = new Keys();
  auto records = take(h, max, timeout_s);
  auto probes = h.queue().probes();
  std::vector<py::str> functions, domains;
  std::vector<std::vector<py::str>> arg_names;
  for (const auto& p : probes) {
    functions.emplace_back(p.function);
    domains.emplace_back(p.domain);
    std::vector<py::str> names;
    for (const auto& n : p.arg_names) names.emplace_back(n);
    arg_names.push_back(std::move(names));
  }
  // Threads keep their names: one string per distinct name in the batch.
  std::unordered_map<std::string_view, py::str> comms;
  py::list out(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    const auto& probe = probes[r.probe];
    py::dict d;
    PyObject* dp = d.ptr();
    set_borrowed(dp, keys->function, functions[r.probe].ptr());
    set_borrowed(dp, keys->domain, domains[r.probe].ptr());
    set_new(dp, keys->pid, PyLong_FromUnsignedLong(r.pid));
    set_new(dp, keys->tid, PyLong_FromUnsignedLong(r.tid));
    std::string_view comm(r.comm.data(), ::strnlen(r.comm.data(), r.comm.size()));
    auto c = comms.find(comm);
    if (c == comms.end()) {
      c = comms
              .emplace(comm, py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(
                                 comm.data(), static_cast<Py_ssize_t>(comm.size()), "replace")))
              .first;
    }
    set_borrowed(dp, keys->comm, c->second.ptr());
    set_new(dp, keys->ts_ns, PyLong_FromUnsignedLongLong(r.ts_ns));
    if (r.has_exit) {
      set_new(dp, keys->dur_ns, PyLong_FromUnsignedLongLong(r.dur_ns));
      set_new(dp, keys->ret, PyLong_FromLongLong(r.ret));
    } else {
      set_borrowed(dp, keys->dur_ns, Py_None);
      set_borrowed(dp, keys->ret, Py_None);
    }
    set_borrowed(dp, keys->nested, r.nested ? Py_True : Py_False);
    py::dict args;
    std::size_t n = std::min<std::size_t>(r.nargs, arg_names[r.probe].size());
    for (std::size_t a = 0; a < n; ++a) {
      PyObject* name = arg_names[r.probe][a].ptr();
      if ((r.fault_mask >> a) & 1U) {
        set_borrowed(args.ptr(), name, Py_None);
      } else if (probe.arg_signed[a]) {
        set_new(args.ptr(), name, PyLong_FromLongLong(static_cast<std::int64_t>(r.args[a])));
      } else {
        set_new(args.ptr(), name, PyLong_FromUnsignedLongLong(r.args[a]));
      }
    }
    set_borrowed(dp, keys->args, args.ptr());
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), d.release().ptr());
  }
  return out;
}

py::list probes(TraceHandle& h) {
  py::list out;
  for (const auto& p : h.queue().probes()) {
    py::dict d;
    d["function"] = p.function;
    d["domain"] = p.domain;
    d["symbol"] = p.symbol;
    d["library"] = p.library;
    d["args"] = p.arg_names;
    out.append(std::move(d));
  }
  return out;
}

std::unique_ptr<TraceHandle> start(const std::string& config_text,
                                   const std::vector<std::string>& probe_names, const std::vector<int>& pids,
                                   const std::vector<std::string>& command, const std::string& mode,
                                   double duration_s, bool sample_gpus,
                                   std::optional<std::uint32_t> python_hz, std::optional<bool> host_waits,
                                   std::size_t capacity) {
  TraceArgs args;
  args.config_text = config_text;
  args.probes = probe_names;
  args.pids = pids;
  args.command = command;
  args.mode = mode;
  args.duration_s = duration_s;
  args.sample_gpus = sample_gpus;
  args.python_hz = python_hz;
  args.host_waits = host_waits;
  args.capacity = capacity == 0 ? 1 : capacity;
  read_environment(args);
  eacgm::Result<std::unique_ptr<TraceHandle>> handle = eacgm::make_error("not started");
  {
    py::gil_scoped_release release;
    handle = TraceHandle::start(args);
  }
  if (!handle) throw StartError{std::move(handle).take_error()};
  return std::move(*handle);
}

std::unique_ptr<NodeAgent> start_agent(const std::string& config_path, const std::string& listen,
                                       std::optional<std::string> store,
                                       const std::vector<std::string>& probe_names, const std::string& mode,
                                       bool sample_gpus) {
  eacgm::pybind::NodeArgs args;
  args.config_path = config_path;
  args.listen = listen;
  args.store = std::move(store);
  args.probes = probe_names;
  args.mode = mode;
  args.sample_gpus = sample_gpus;
  read_environment(args);
  eacgm::Result<std::unique_ptr<NodeAgent>> agent = eacgm::make_error("not started");
  {
    py::gil_scoped_release release;
    agent = eacgm::pybind::start_node(args);
  }
  if (!agent) throw StartError{std::move(agent).take_error()};
  return std::move(*agent);
}

PyObject* new_exception(py::module_& m, const char* name, PyObject* bases, const char* doc) {
  std::string full = std::string("eacgm._eacgm.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(full.c_str(), doc, bases, nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));
  return type;
}

}  // namespace

PYBIND11_MODULE(_eacgm, m) {
  m.doc() = "eACGM's agent, run from Python (use the `eacgm` package, not this module)";
  m.attr("version") = std::string(eacgm::build_version());

  g_error = new_exception(m, "Error", PyExc_RuntimeError, "A trace failed (BPF, attach, the system).");
  g_usage = new_exception(m, "UsageError",
                          py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError)).release().ptr(),
                          "The request is wrong: a probe name, a pid, a symbol, BPF text.");
  g_launch = new_exception(m, "LaunchError", g_error, "The command to trace could not be started.");
  g_privilege =
      new_exception(m, "PrivilegeError",
                    py::make_tuple(py::handle(g_error), py::handle(PyExc_PermissionError)).release().ptr(),
                    "Tracing needs root (or CAP_BPF and CAP_PERFMON).");
  g_nvml = new_exception(m, "NVMLError", g_error, "NVML could not be loaded (no NVIDIA driver here).");

  py::register_exception_translator(
      [](std::exception_ptr p) {  // NOLINT(performance-unnecessary-value-param): pybind11 fixes the signature
        try {
          if (p) std::rethrow_exception(p);
        } catch (const NvmlError& e) {
          PyErr_SetString(g_nvml, e.message.c_str());
        } catch (const StartError& e) {
          PyObject* type = g_error;
          if (e.error.sys_errno == EPERM || e.error.sys_errno == EACCES) {
            type = g_privilege;
          } else if (e.error.kind == ErrorKind::kUsage) {
            type = g_usage;
          } else if (e.error.kind == ErrorKind::kLaunch) {
            type = g_launch;
          }
          PyErr_SetString(type, e.error.message.c_str());
        }
      });

  py::class_<TraceHandle>(m, "Trace")
      .def(py::init(&start), py::arg("config_text"), py::arg("probes"), py::arg("pids"), py::arg("command"),
           py::arg("mode"), py::arg("duration_s"), py::arg("sample_gpus"), py::arg("python_hz"),
           py::arg("host_waits"), py::arg("capacity"))
      .def("take_records", &take_records, py::arg("max"), py::arg("timeout_s"),
           "Up to `max` calls as packed records (python/eacgm/_records.py's dtype); b'' at the end.")
      .def("take_dicts", &take_dicts, py::arg("max"), py::arg("timeout_s"), "Up to `max` calls as dicts.")
      .def("probes", &probes, "The probes the records' `probe` field indexes.")
      .def(
          "stop",
          [](TraceHandle& h) {
            py::gil_scoped_release release;
            h.stop();
          },
          "Ends the trace (a traced command gets SIGTERM) and waits for it.")
      .def(
          "wait",
          [](TraceHandle& h, double timeout_s) {
            return wait_interruptibly(timeout_s, [&] {
              if (!h.running()) {
                h.wait();
                return true;
              }
              std::this_thread::sleep_for(kSlice);
              return !h.running();
            });
          },
          py::arg("timeout_s") = -1.0, "Waits for the trace to end by itself; False on timeout.")
      .def_property_readonly("running", &TraceHandle::running)
      .def_property_readonly("exit_code", &TraceHandle::exit_code)
      .def_property_readonly("command_pid", &TraceHandle::command_pid)
      .def_property_readonly("dropped", [](TraceHandle& h) { return h.queue().dropped(); })
      .def("report_json", &TraceHandle::report_json, py::call_guard<py::gil_scoped_release>())
      .def("take_notices", &TraceHandle::take_notices);
  m.attr("record_size") = sizeof(CallRecord);

  py::class_<NodeAgent>(m, "NodeAgent")
      .def(py::init(&start_agent), py::arg("config_path"), py::arg("listen"), py::arg("store"),
           py::arg("probes"), py::arg("mode"), py::arg("sample_gpus"))
      .def_property_readonly("url", &NodeAgent::url)
      .def_property_readonly("port", &NodeAgent::port)
      .def_property_readonly("last_notice", &NodeAgent::last_notice)
      .def("report_json", &eacgm::pybind::node_report_json, py::call_guard<py::gil_scoped_release>())
      .def("stop", &NodeAgent::stop, py::call_guard<py::gil_scoped_release>(),
           "Detaches the probes, writes the history's last interval and stops serving.");

  py::class_<eacgm::pybind::GpuReader>(m, "Gpus")
      .def(py::init(&open_gpus), py::arg("first_window_s") = 1.0)
      .def("devices", &device_dicts, "One pass over the GPUs (NVML's units; absent fields None).")
      .def("processes", &process_dicts, "The processes on the GPUs since the last call.");
}
