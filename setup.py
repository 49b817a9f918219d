"""Builds the module `pleshard` with CMake for pip (`pip install --no-build-isolation .`;
docs/python.md, "Building and installing").

The CMake build directory is PLESHARD_BUILD_DIR, by default build-python/ in the checkout,
configured on first use for this interpreter (Release, without the tests; PLESHARD_CMAKE_ARGS
adds options, e.g. -DPLESHARD_ENABLE_CUDA=OFF; CMAKE_BUILD_PARALLEL_LEVEL sets the jobs). An
existing build directory (the checkout's build/) is used as it is configured: only the module's
target is built, if anything changed. The wheel holds the module, its stub pleshard.pyi and,
in pleshard.libs/ beside them, the library it loads (found through the module's RPATH,
$ORIGIN/pleshard.libs): CMake's install component python_wheel (python/CMakeLists.txt)."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
WORK = ROOT / "build-python"


def project_version():
    match = re.search(r"project\(pleshard VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    return match.group(1)


def cached(build, name):
    """The value of a CMake cache entry (NAME:TYPE=VALUE) of the build directory, or None."""
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        if line.split(":", 1)[0] == name and "=" in line:
            return line.split("=", 1)[1]
    return None


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(os.environ.get("PLESHARD_BUILD_DIR") or WORK / "cmake").resolve()
        if not (build / "CMakeCache.txt").exists():
            generator = ["-G", "Ninja"] if shutil.which("ninja") else []
            self.spawn(["cmake", "-S", str(ROOT), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Release",
                        "-DPLESHARD_ENABLE_TESTS=OFF", "-DPLESHARD_ENABLE_PYTHON=ON",
                        f"-DPython_EXECUTABLE={sys.executable}",
                        *shlex.split(os.environ.get("PLESHARD_CMAKE_ARGS", ""))])
        if cached(build, "PLESHARD_ENABLE_PYTHON") != "ON":
            sys.exit(f"pleshard: {build} builds no Python module (PLESHARD_ENABLE_PYTHON is off: pybind11 "
                     "or Python's development files not found; Debian: pybind11-dev python3-dev)")
        self.spawn(["cmake", "--build", str(build), "--target", "pleshard_python"])
        stage = Path(self.build_temp).resolve() / "pleshard-wheel"
        shutil.rmtree(stage, ignore_errors=True)
        self.spawn(["cmake", "--install", str(build), "--component", "python_wheel", "--prefix", str(stage)])
        module = stage / ext_file_name()
        if not module.exists():
            built = sorted(p.name for p in stage.glob("pleshard*.so"))
            sys.exit(f"pleshard: {build} built {built} for {cached(build, 'PLESHARD_PYTHON')}, not "
                     f"{ext_file_name()} for {sys.executable}: name another PLESHARD_BUILD_DIR")
        target = Path(self.get_ext_fullpath(ext.name)).parent
        target.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(target / "pleshard.libs", ignore_errors=True)
        for item in stage.iterdir():
            (shutil.copytree if item.is_dir() else shutil.copy2)(item, target / item.name)


def ext_file_name():
    return "pleshard" + sysconfig.get_config_var("EXT_SUFFIX")


WORK.mkdir(exist_ok=True)
setup(
    version=project_version(),
    ext_modules=[Extension("pleshard", sources=[])],
    packages=[],  # the module is the extension alone: no package to discover in the checkout
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own work beside CMake's, out of the checkout's build/ (CMake's directory).
    options={"build": {"build_base": str(WORK / "setuptools")}, "egg_info": {"egg_base": str(WORK)}},
    zip_safe=False,
)
