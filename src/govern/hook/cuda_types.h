// The driver API types (from the toolkit's cuda.h, which the hook is compiled against)
// and the few NVML types it needs (copied from nvml.h's layouts, which the toolkit does
// not ship).
#pragma once

#include <cuda.h>

// cuda.h maps cuGetProcAddress to cuGetProcAddress_v2 and cuStreamBeginCapture to
// cuStreamBeginCapture_v2; the hook exports both ABIs of each.
#undef cuGetProcAddress
#undef cuStreamBeginCapture

extern "C" {
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned int version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
}

inline constexpr nvmlReturn_t kNvmlSuccess = 0;
inline constexpr nvmlReturn_t kNvmlFunctionNotFound = 13;
