// Probe naming rules: libtorch_python binding symbols to op names, and the fallback.
#include "probe/symbol_names.h"

#include <gtest/gtest.h>

#include <string>

namespace eacgm::probe {
namespace {

// The Itanium mangling of torch::autograd::THPVariable_<op>(_object*, _object*[, _object*]).
std::string binding(const std::string& op, bool local = true, bool kwargs = true) {
  std::string ident = "THPVariable_" + op;
  return "_ZN5torch8autograd" + std::string(local ? "L" : "") + std::to_string(ident.size()) + ident +
         "EP7_objectS2_" + (kwargs ? "S2_" : "");
}

TEST(SymbolNames, TorchOpsFromStaticBindings) {
  EXPECT_EQ(binding("gelu"), "_ZN5torch8autogradL16THPVariable_geluEP7_objectS2_S2_");
  EXPECT_EQ(torch_op_name("_ZN5torch8autogradL16THPVariable_geluEP7_objectS2_S2_"), "gelu");
  for (const char* op : {"linear", "add_", "_scaled_dot_product_attention", "__and__", "t"}) {
    EXPECT_EQ(torch_op_name(binding(op)), op);
  }
  // Two-argument (METH_NOARGS-style) bindings and external linkage.
  EXPECT_EQ(torch_op_name(binding("dim", true, false)), "dim");
  EXPECT_EQ(torch_op_name(binding("matmul", false)), "matmul");
}

TEST(SymbolNames, NonBindingsAreRejected) {
  EXPECT_EQ(torch_op_name("_ZN5torch8autograd9generated12THPVariable_xEv"), "");
  EXPECT_EQ(torch_op_name("_ZN5torch8autogradL12THPVariable_EP7_object"), "");  // no op
  EXPECT_EQ(torch_op_name("_ZN5torch8autogradL15THPFunction_fooEP7_object"), "");
  EXPECT_EQ(torch_op_name("_ZN5torch8autogradL99THPVariable_geluE"), "");  // past the end
  EXPECT_EQ(torch_op_name("_ZN5torch8autogradLTHPVariable_geluE"), "");    // no length
  EXPECT_EQ(torch_op_name("cudaMalloc"), "");
  EXPECT_EQ(pattern_probe_name(NameRule::kTorchOp, "_ZN5torch3jit4fooEv"), "");
}

TEST(SymbolNames, DemangledRule) {
  EXPECT_EQ(pattern_probe_name(NameRule::kDemangled, binding("gelu")),
            "torch::autograd::THPVariable_gelu(_object*, _object*, _object*)");
  EXPECT_EQ(pattern_probe_name(NameRule::kTorchOp, binding("gelu")), "gelu");
  EXPECT_EQ(pattern_probe_name(NameRule::kDemangled, "cudaMalloc"), "cudaMalloc");
}

}  // namespace
}  // namespace eacgm::probe
