"""Builds the extension `eacgm._eacgm` for `pip install ./python` (pyproject.toml) with the
project's CMake, in the build tree `make` uses, so the installed package is that build's."""
import importlib.util
import os
import pathlib
import re
import shutil
import sys
import sysconfig

import setuptools
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

REPO = pathlib.Path(__file__).resolve().parent.parent
# EACGM_BUILD_DIR: another CMake build tree (one for another Python, say).
BUILD_DIR = pathlib.Path(os.environ.get("EACGM_BUILD_DIR") or REPO / "build").resolve()
# setuptools' own files go into the build tree too, not into the source tree.
STAGING = BUILD_DIR / "python-wheel"


def repo_version():
    """The version of CMakeLists.txt's project(), the one `eacgm --version` prints."""
    cmake_lists = REPO / "CMakeLists.txt"
    if not cmake_lists.is_file():
        sys.exit(f"eacgm: {cmake_lists} is missing: the package builds from its source repository; "
                 "run `pip install ./python` in a checkout of it")
    match = re.search(r"project\(eacgm VERSION ([0-9.]+)", cmake_lists.read_text())
    if not match:
        sys.exit(f"eacgm: no `project(eacgm VERSION ...)` in {cmake_lists}")
    return match.group(1)


def cached_python():
    cache = (BUILD_DIR / "CMakeCache.txt").read_text(errors="replace")
    match = re.search(r"^Python_EXECUTABLE:[A-Z]*=(.*)$", cache, re.MULTILINE)
    return match.group(1) if match else "another Python"


class CMakeBuild(build_ext):
    """Configures the build tree if it has no cache yet, builds eacgm_pymodule there
    (nothing when it is current) and puts the extension into the wheel."""

    def build_extension(self, ext):
        if not (BUILD_DIR / "CMakeCache.txt").is_file():
            # A virtual environment's python is a link that goes away with it; the build
            # tree keeps the interpreter underneath.
            python = getattr(sys, "_base_executable", None) or sys.executable
            self.spawn(["cmake", "-S", str(REPO), "-B", str(BUILD_DIR), "-G", "Ninja", f"-DPython_EXECUTABLE={python}"])
        self.spawn(["cmake", "--build", str(BUILD_DIR), "--target", "eacgm_pymodule"])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = BUILD_DIR / "python" / "eacgm" / f"_eacgm{suffix}"
        if not built.is_file():
            sys.exit(f"eacgm: {BUILD_DIR} builds the extension for {cached_python()}, not for this Python "
                     f"({sys.version.split()[0]}, {suffix}): set EACGM_BUILD_DIR to a new directory "
                     "to build one for it")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        # The debug information (about 200 MB) stays in the build tree's copy; the
        # installed one is about 9 MB.
        if shutil.which("strip"):
            self.spawn(["strip", "--strip-debug", "-o", str(target), str(built)])
        else:
            shutil.copyfile(built, target)


# setuptools before 70.1 builds wheels with the `wheel` package; without it pip's error is
# "invalid command 'bdist_wheel'".
if importlib.util.find_spec("setuptools.command.bdist_wheel") is None and importlib.util.find_spec("wheel") is None:
    sys.exit(f"eacgm: this Python ({sys.executable}) has no `wheel` package, which setuptools "
             f"{setuptools.__version__} needs to build the wheel: create the environment with Debian's "
             "/usr/bin/python3 and --system-site-packages (python3-wheel), or drop --no-build-isolation "
             "where pip can download it")
STAGING.mkdir(parents=True, exist_ok=True)
setup(
    version=repo_version(),
    ext_modules=[Extension("eacgm._eacgm", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(STAGING)}, "egg_info": {"egg_base": str(STAGING)}},
)
