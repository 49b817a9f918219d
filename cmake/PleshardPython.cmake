# The Python module's dependencies: pybind11 and the interpreter it builds for. The system's
# interpreter (/usr/bin/python3, whose site holds Debian's pybind11, mpi4py and NumPy) comes
# before one earlier on PATH (pyenv) that may lack them; -DPython_EXECUTABLE=... chooses another.
if(NOT DEFINED Python_EXECUTABLE)
  find_program(PLESHARD_SYSTEM_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(PLESHARD_SYSTEM_PYTHON)
    set(Python_EXECUTABLE ${PLESHARD_SYSTEM_PYTHON})
  endif()
endif()
find_package(Python 3 COMPONENTS Interpreter Development.Module QUIET)
set(PYBIND11_FINDPYTHON ON)
find_package(pybind11 CONFIG QUIET)
set(_pleshard_have_pybind11 OFF)
if(Python_FOUND AND pybind11_FOUND)
  set(_pleshard_have_pybind11 ON)
endif()
option(PLESHARD_ENABLE_PYTHON "Build the Python module pleshard (on when pybind11 is found)" ${_pleshard_have_pybind11})
if(PLESHARD_ENABLE_PYTHON)
  if(NOT _pleshard_have_pybind11)
    message(FATAL_ERROR "PLESHARD_ENABLE_PYTHON: pybind11 or Python's development files not found "
                        "(Debian: pybind11-dev python3-dev)")
  endif()
  set(PLESHARD_PYTHON_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/python${Python_VERSION_MAJOR}.${Python_VERSION_MINOR}/site-packages"
      CACHE STRING "Where the Python module is installed, under the prefix (on PYTHONPATH for Python to find it)")
  set(PLESHARD_PYTHON "${Python_EXECUTABLE}" CACHE INTERNAL "The interpreter the Python module is built for")
  # The module finds the library from where both are installed.
  file(RELATIVE_PATH PLESHARD_PYTHON_RPATH "/prefix/${PLESHARD_PYTHON_INSTALL_DIR}" "/prefix/${CMAKE_INSTALL_LIBDIR}")
endif()
