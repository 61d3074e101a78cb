// A stand-in for libtorch_python.so: static functions torch::autograd::THPVariable_<op>
// with the bindings' signatures, so the torch catalog is tested without PyTorch.
#include <cstdint>

struct _object {
  long refcnt;
};
typedef _object PyObject;

namespace {
// Where the bindings count their calls; the program reads it back.
long g_calls = 0;
}  // namespace

// The ops: torch functions, Tensor methods (in-place variants) and nn functions.
// clang-format off
#define EACGM_FAKE_TORCH_OPS(X)                                                                 \
  X(gelu) X(linear) X(add_) X(add) X(mul) X(mul_) X(matmul) X(relu) X(relu_) X(softmax)        \
  X(log_softmax) X(layer_norm) X(dropout) X(conv2d) X(max_pool2d) X(embedding) X(cat) X(stack) \
  X(view) X(reshape) X(transpose) X(permute) X(contiguous) X(sum) X(mean) X(sub) X(div) X(exp) \
  X(tanh) X(sigmoid) X(zeros) X(ones) X(empty) X(randn) X(addmm) X(bmm) X(baddbmm) X(_softmax) \
  X(scaled_dot_product_attention) X(copy_)
// clang-format on

namespace torch {
namespace autograd {
#define EACGM_DEFINE_OP(op)                                                                         \
  __attribute__((noinline, used)) static PyObject* THPVariable_##op(PyObject* self, PyObject* args, \
                                                                    PyObject* kwargs) {             \
    asm volatile("" ::: "memory");                                                                  \
    ++g_calls;                                                                                      \
    return args != nullptr ? args : (kwargs != nullptr ? kwargs : self);                            \
  }
EACGM_FAKE_TORCH_OPS(EACGM_DEFINE_OP)
#undef EACGM_DEFINE_OP

// A property getter: its (THPVariable*, void*) shape must not be matched.
struct THPVariable;
__attribute__((noinline, used)) static PyObject* THPVariable_get_grad(THPVariable*, void*) {
  asm volatile("" ::: "memory");
  ++g_calls;
  return nullptr;
}
}  // namespace autograd
}  // namespace torch

using Binding = PyObject* (*)(PyObject*, PyObject*, PyObject*);

struct NamedBinding {
  const char* name;
  Binding fn;
};

#define EACGM_TABLE_ENTRY(op) {#op, &torch::autograd::THPVariable_##op},
static const NamedBinding kBindings[] = {EACGM_FAKE_TORCH_OPS(EACGM_TABLE_ENTRY)};
#undef EACGM_TABLE_ENTRY

// The program's way in: call binding `i` once, as CPython would through a method table.
extern "C" __attribute__((visibility("default"))) int eacgm_fake_torch_count() {
  return static_cast<int>(sizeof(kBindings) / sizeof(kBindings[0]));
}
extern "C" __attribute__((visibility("default"))) const char* eacgm_fake_torch_name(int i) {
  return kBindings[i].name;
}
extern "C" __attribute__((visibility("default"))) long eacgm_fake_torch_call(int i) {
  _object o{1};
  kBindings[i].fn(&o, &o, nullptr);
  return g_calls;
}
extern "C" __attribute__((visibility("default"))) long eacgm_fake_torch_get_grad() {
  torch::autograd::THPVariable_get_grad(nullptr, nullptr);
  return g_calls;
}
