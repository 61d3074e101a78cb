// The name of the hook's private copy of libcuda (govern/hook/private_driver.cpp): keyed
// by the NVIDIA kernel module's version, which the driver library must match, so a copy
// made for one driver is never loaded with another. The agent knows a copy by it
// (probe/attacher.cpp): a process maps one in place of libcuda.
#pragma once

#include <string>
#include <string_view>

namespace eacgm {

// The module's version from /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX Open
// Kernel Module for x86_64  580.159.04  Release Build ..." gives "580.159.04"): the first
// word of its first line made of digits and dots with a dot inside; "" when there is none.
std::string driver_module_version(std::string_view version_file);

// "eacgm-libcuda.so.KEY": KEY is `module_version`, or with none (no NVIDIA module: a
// stand-in driver) "SIZE-MTIME" of the driver file. Never "libcuda.so*", the file names
// the agent's driver probes match.
std::string driver_copy_name(std::string_view module_version, long long size, long long mtime);

// Whether `driver_path` (the library file itself, links resolved) is of `module_version`:
// its name ends in ".so.VERSION", as the driver's installers name it.
bool driver_of_version(std::string_view driver_path, std::string_view module_version);

// Whether the file at `path` is such a copy (by its name).
bool is_driver_copy(std::string_view path);

}  // namespace eacgm
