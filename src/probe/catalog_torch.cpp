// The PyTorch catalog: libtorch_python's Python bindings of ATen ops, found by pattern
// in the symbol table (.symtab included: the bindings are static functions), named by op.
#include "probe/catalog.h"

namespace eacgm::probe {
namespace {

// torch::autograd::THPVariable_<op>(PyObject* self, PyObject* args[, PyObject* kwargs]):
// torch.<op>, Tensor.<op> and torch._C._nn.<op>. The (_object*, ...) parameter list keeps
// out the property getters, which take (THPVariable*, void*).
ProbeSpec op_spec(const char* name, const char* pattern) {
  ProbeSpec s;
  s.name = name;
  s.domain = "torch";
  s.library = "libtorch_python.so*";
  s.symbol = pattern;
  s.symbol_is_pattern = true;
  s.name_rule = NameRule::kTorchOp;
  s.with_exit = true;
  s.ret = ReturnKind::kPointer;  // NULL: the op raised a Python exception
  return s;
}

}  // namespace

Catalog torch_catalog() {
  Catalog c{"torch", "PyTorch ops called from Python (libtorch_python THPVariable_* bindings; opt-in)", {}};
  c.specs.push_back(op_spec("torch_ops", "_ZN5torch8autogradL[0-9]*THPVariable_*EP7_object*"));
  c.specs.push_back(op_spec("torch_ops_extern", "_ZN5torch8autograd[0-9]*THPVariable_*EP7_object*"));
  return c;
}

}  // namespace eacgm::probe
