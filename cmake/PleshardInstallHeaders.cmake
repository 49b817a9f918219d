# Included at install time (install(CODE) in PleshardPackage.cmake): installs the public
# headers and nothing else. The public headers are PLESHARD_PUBLIC_HEADERS (paths as they are
# included, relative to lib/) and every header they include, transitively — a public header
# must compile where it is installed — each under PLESHARD_INCLUDE_DESTINATION with the path
# it is included by. Headers that no public one includes (detail/, kernel launchers, the
# stores' and the job's internals) stay out. Computed when installing, so a header's new
# includes need no new configure.
set(_queue ${PLESHARD_PUBLIC_HEADERS})
set(_done "")
while(_queue)
  list(POP_FRONT _queue _header)
  list(FIND _done "${_header}" _seen)  # (no IN_LIST: install scripts run under old policies)
  if(NOT _seen EQUAL -1)
    continue()
  endif()
  list(APPEND _done ${_header})
  if(EXISTS "${PLESHARD_SOURCE_DIR}/lib/${_header}")
    set(_file "${PLESHARD_SOURCE_DIR}/lib/${_header}")
  elseif(EXISTS "${PLESHARD_SOURCE_DIR}/${_header}")
    set(_file "${PLESHARD_SOURCE_DIR}/${_header}")
  else()
    message(FATAL_ERROR "pleshard: a public header includes \"${_header}\", found neither under lib/ nor at the "
                        "source root: it cannot be installed")
  endif()
  get_filename_component(_dir "${_header}" DIRECTORY)
  file(INSTALL FILES "${_file}" DESTINATION "${CMAKE_INSTALL_PREFIX}/${PLESHARD_INCLUDE_DESTINATION}/${_dir}")
  file(STRINGS "${_file}" _includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(_line IN LISTS _includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" _included "${_line}")
    list(APPEND _queue "${_included}")
  endforeach()
endwhile()
