# SPDX-License-Identifier: BSD-3-Clause
"""Build of the bsrsolve extension against a built or installed libbsrsolve.

Where the library is, first found wins:
  BSRSOLVE_PREFIX     an installed tree (cmake --install ... --prefix P):
                      P/include/bsrsolve.h and P/lib*/libbsrsolve.so
  BSRSOLVE_BUILD_DIR  a CMake build tree holding libbsrsolve.so; the headers
                      come from the source tree it was configured from
  default             the repository's build/ (what `make` builds)
The extension records the library's folder as its rpath, so nothing needs
LD_LIBRARY_PATH afterwards (the library must stay where it is).
"""
import os
import re
import sysconfig

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def _source_of(build):
    """The source folder a CMake build tree was configured from (None if unknown)."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


def _locate():
    """(include dir, library dir) of libbsrsolve."""
    prefix = os.environ.get("BSRSOLVE_PREFIX")
    if prefix:
        inc = os.path.join(prefix, "include")
        arch = sysconfig.get_config_var("MULTIARCH") or ""
        libs = [os.path.join(prefix, d) for d in ("lib", "lib64", os.path.join("lib", arch))]
        found = [d for d in libs if os.path.exists(os.path.join(d, "libbsrsolve.so"))]
        where = "BSRSOLVE_PREFIX=%s" % prefix
    else:
        build = os.path.abspath(os.environ.get("BSRSOLVE_BUILD_DIR") or os.path.join(HERE, "..", "build"))
        src = _source_of(build) or os.path.join(HERE, "..")
        inc = os.path.join(src, "include")
        found = [build] if os.path.exists(os.path.join(build, "libbsrsolve.so")) else []
        where = "build tree %s (set BSRSOLVE_BUILD_DIR or BSRSOLVE_PREFIX)" % build
    if not found:
        raise SystemExit("bsrsolve: libbsrsolve.so not found in %s; build the library first "
                         "(make, or cmake --build build)" % where)
    if not os.path.exists(os.path.join(inc, "bsrsolve.h")):
        raise SystemExit("bsrsolve: bsrsolve.h not found in %s" % inc)
    return os.path.abspath(inc), os.path.abspath(found[0])


def _version(inc):
    with open(os.path.join(inc, "bsrsolve.h")) as f:
        m = re.search(r'#define BSR_VERSION "([^"]+)"', f.read())
    return m.group(1) if m else "0"


inc, lib = _locate()
setup(
    version=_version(inc),
    packages=["bsrsolve"],
    ext_modules=[Extension("bsrsolve._core", ["bsrsolve/_core.c"], include_dirs=[inc],
                           library_dirs=[lib], libraries=["bsrsolve"], runtime_library_dirs=[lib])],
)
