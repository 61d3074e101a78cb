// Writes the seed corpus of the record-decoder fuzz target: one valid record of each
// kind and size (bpf/events.h), for the probes of fuzz_probes.h. Run from the source tree:
//   ninja -C build eacgm_fuzz_seeds && build/tests/fuzz/eacgm_fuzz_seeds tests/fuzz/corpus/record_decoder
#include <cstdio>
#include <cstring>
#include <string>

#include "core/record_abi.h"

namespace {

eacgm_record base(std::uint32_t probe_id) {
  eacgm_record r{};
  r.ts_ns = 1'000'000'000;
  r.pid = 4242;
  r.tid = 4243;
  r.probe_id = probe_id;
  r.type = EACGM_REC_CALL;
  std::strcpy(r.comm, "python3");
  return r;
}

bool write(const std::string& dir, const char* name, const eacgm_record& r, std::size_t size) {
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(&r, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = true;

  eacgm_record malloc_call = base(0);  // cudaMalloc: paired, no strings
  malloc_call.flags = EACGM_REC_HAS_EXIT;
  malloc_call.dur_ns = 8350;
  malloc_call.ret = 2;
  malloc_call.nargs = 2;
  malloc_call.args[0] = 0x7f0000001000;
  malloc_call.args[1] = 1 << 20;
  ok = ok && write(dir, "call_no_str", malloc_call, EACGM_REC_SIZE_NO_STR);

  eacgm_record lookup = base(1);  // cuModuleGetFunction: one string, cut short, nested
  lookup.flags = EACGM_REC_HAS_EXIT | EACGM_REC_STR_TRUNC | EACGM_REC_NESTED;
  lookup.nargs = 2;
  lookup.args[1] = 0x400000;
  std::memset(lookup.str, 'k', EACGM_STR_LEN - 1);
  std::memcpy(lookup.str, "_Z", 2);
  ok = ok && write(dir, "call_str", lookup, EACGM_REC_SIZE_STR);

  eacgm_record faulted = lookup;  // its string unreadable
  faulted.fault_mask = 0x2;
  faulted.flags = EACGM_REC_HAS_EXIT;
  std::memset(faulted.str, 0, sizeof(faulted.str));
  ok = ok && write(dir, "call_str_fault", faulted, EACGM_REC_SIZE_STR);

  eacgm_record py = base(2);  // python: entry-only, two strings
  py.nargs = 3;
  std::strcpy(py.str, "forward");
  std::strcpy(py.str2, "/usr/lib/python3/site-packages/torch/nn/modules/module.py");
  py.args[2] = 1532;
  ok = ok && write(dir, "call_two_str", py, EACGM_REC_SIZE_FULL);

  eacgm_record launch = base(3);  // cudaLaunchKernel: dim3 arguments
  launch.flags = EACGM_REC_HAS_EXIT;
  launch.nargs = 3;
  launch.args[1] = 2 | (3ull << 32);
  launch.ext[1] = 4;
  launch.args[2] = 256 | (1ull << 32);
  launch.ext[2] = 1;
  ok = ok && write(dir, "call_dim3", launch, EACGM_REC_SIZE_NO_STR);

  eacgm_record split = base(4);  // a split probe's return record: ret and stack pointer
  split.flags = EACGM_REC_HAS_EXIT;
  split.ret = 0x7f00deadbeef;
  split.nargs = 1;
  split.args[0] = 0x7ffc12345678;
  ok = ok && write(dir, "split_return", split, EACGM_REC_SIZE_NO_STR);

  eacgm_record exec = base(0);  // discovery hints
  exec.type = EACGM_REC_EXEC;
  exec.flags = EACGM_REC_STOPPED;
  ok = ok && write(dir, "hint_exec", exec, EACGM_REC_SIZE_NO_STR);
  eacgm_record lib = base(0);
  lib.type = EACGM_REC_LIB_LOADED;
  ok = ok && write(dir, "hint_lib_loaded", lib, EACGM_REC_SIZE_NO_STR);

  eacgm_record unknown = malloc_call;  // a probe id with no ProbeInfo
  unknown.probe_id = 60000;
  ok = ok && write(dir, "unknown_probe", unknown, EACGM_REC_SIZE_NO_STR);

  if (!ok) {
    std::fprintf(stderr, "cannot write the seeds to %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
