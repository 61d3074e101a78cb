// Python stacks as text (export/python_stack_text.h).
#include "export/python_stack_text.h"

namespace eacgm::exporting {

std::vector<std::string> python_stack_frames(const PythonStack& stack) {
  std::vector<std::string> out;
  out.reserve(stack.frames.size());
  for (const auto& f : stack.frames) {
    if (!f.code) continue;
    out.push_back(f.code->native
                      ? f.code->function
                      : f.code->function + " (" + f.code->file + ":" + std::to_string(f.line) + ")");
  }
  return out;
}

}  // namespace eacgm::exporting
