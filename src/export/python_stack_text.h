// A Python stack as text, one string per frame, innermost first: "function (file:line)",
// and a traced call the thread waits in as "[domain] function". The stack of a capture's
// samples (`args.stack`) and of a stuck thread (`python_stack` in /api/v1/inflight and the
// hangs).
#pragma once

#include <string>
#include <vector>

#include "core/python_stack.h"

namespace eacgm::exporting {

std::vector<std::string> python_stack_frames(const PythonStack& stack);

}  // namespace eacgm::exporting
