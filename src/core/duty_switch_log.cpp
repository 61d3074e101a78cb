// The duty cycle's switch log line (core/duty_switch_log.h).
#include "core/duty_switch_log.h"

#include <fmt/format.h>

namespace eacgm {

void write_duty_switch(std::FILE* file, bool attached, long long began_ns, long long counting_ns,
                       long long ended_ns, bool ok) {
  fmt::print(file, "switch attached={} began_ns={} counting_ns={} ended_ns={} ok={}\n", attached ? 1 : 0,
             began_ns, counting_ns, ended_ns, ok ? 1 : 0);
  std::fflush(file);
}

}  // namespace eacgm
