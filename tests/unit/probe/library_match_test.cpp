// Library glob matching and demangling.
#include "probe/library_match.h"

#include <gtest/gtest.h>

namespace eacgm::probe {
namespace {

TEST(LibraryMatches, GlobAppliesToTheBasename) {
  EXPECT_TRUE(library_matches("libcudart.so*",
                              "/opt/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcudart.so.13"));
  EXPECT_TRUE(library_matches("libcudart.so*", "libcudart.so"));
  EXPECT_TRUE(library_matches("libnccl.so.2", "/usr/lib/libnccl.so.2"));
  EXPECT_FALSE(library_matches("libcudart.so*", "/usr/lib/libcudart_static.a"));
  EXPECT_FALSE(library_matches("libcudart.so*", "/opt/libcudart.so.13/libfoo.so"));  // directory, not file
  EXPECT_FALSE(library_matches("libnccl.so.2", "/usr/lib/libnccl.so.2.1"));
}

TEST(LibraryMatches, GlobWithSlashAppliesToTheWholePath) {
  EXPECT_TRUE(library_matches("*/cu13/lib/libcudart.so*", "/opt/venv/nvidia/cu13/lib/libcudart.so.13"));
  EXPECT_FALSE(library_matches("*/cu12/lib/libcudart.so*", "/opt/venv/nvidia/cu13/lib/libcudart.so.13"));
}

TEST(Demangle, ItaniumNamesBecomeReadable) {
  EXPECT_EQ(demangle("_ZN2at4_ops3add4callERKNS_6TensorES4_RKN3c106ScalarE"),
            "at::_ops::add::call(at::Tensor const&, at::Tensor const&, c10::Scalar const&)");
  EXPECT_EQ(demangle("_ZN3foo3barEv@V1"), "foo::bar()@V1");
}

TEST(Demangle, OtherNamesAreReturnedUnchanged) {
  EXPECT_EQ(demangle("cudaMalloc"), "cudaMalloc");
  EXPECT_EQ(demangle("_Zgarbage"), "_Zgarbage");
  EXPECT_EQ(demangle(""), "");
}

}  // namespace
}  // namespace eacgm::probe
