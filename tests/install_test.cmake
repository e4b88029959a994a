# ctest `install_consumer`: install this build into a scratch prefix, check that the installed
# public headers need nothing beyond the C++ standard library, then configure, build and run
# tests/install_consumer (find_package(stiffgrad) + stiffgrad::stiffgrad) against the prefix.
#
# This file has two roles:
#   include()d from tests/CMakeLists.txt   it registers the test;
#   run with `cmake -P` (by that test)      it does the work, portably (no shell).

if(NOT CMAKE_SCRIPT_MODE_FILE)
  # ---------------------------------------------------------------- registration
  set(_sg_it_work ${CMAKE_CURRENT_BINARY_DIR}/install_consumer)
  set(_sg_it_cuda_compiler "")
  if(STIFFGRAD_CUDA AND CMAKE_CUDA_COMPILER)
    set(_sg_it_cuda_compiler ${CMAKE_CUDA_COMPILER})
  endif()
  add_test(NAME install_consumer
    COMMAND ${CMAKE_COMMAND}
      -DSG_BUILD_DIR=${PROJECT_BINARY_DIR}
      -DSG_WORK_DIR=${_sg_it_work}
      -DSG_CONSUMER_SOURCE=${CMAKE_CURRENT_SOURCE_DIR}/install_consumer
      -DSG_CONFIG=$<CONFIG>
      -DSG_BUILD_TYPE=${CMAKE_BUILD_TYPE}
      "-DSG_GENERATOR=${CMAKE_GENERATOR}"
      "-DSG_GENERATOR_PLATFORM=${CMAKE_GENERATOR_PLATFORM}"
      "-DSG_GENERATOR_TOOLSET=${CMAKE_GENERATOR_TOOLSET}"
      "-DSG_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
      "-DSG_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
      "-DSG_CUDA_COMPILER=${_sg_it_cuda_compiler}"
      -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(install_consumer PROPERTIES TIMEOUT 900 LABELS install)
  unset(_sg_it_work)
  unset(_sg_it_cuda_compiler)
  return()
endif()

# ---------------------------------------------------------------- script mode
foreach(var SG_BUILD_DIR SG_WORK_DIR SG_CONSUMER_SOURCE SG_GENERATOR SG_CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "install_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${SG_WORK_DIR}/prefix)
set(consumer_build ${SG_WORK_DIR}/build)
file(REMOVE_RECURSE ${prefix} ${consumer_build})
file(MAKE_DIRECTORY ${SG_WORK_DIR})

set(config "${SG_CONFIG}")
if(config STREQUAL "")
  set(config "${SG_BUILD_TYPE}")
endif()
set(config_args "")
if(NOT config STREQUAL "")
  set(config_args --config ${config})
endif()

function(sg_run what)
  string(REPLACE ";" " " pretty "${ARGN}")
  message(STATUS "[${what}] ${pretty}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: ${what} failed (${rc})")
  endif()
endfunction()

# 1. Install.
sg_run(install ${CMAKE_COMMAND} --install ${SG_BUILD_DIR} --prefix ${prefix} ${config_args})

# 2. The installed headers may include only each other and standard headers.
file(GLOB_RECURSE headers RELATIVE ${prefix}/include ${prefix}/include/stiffgrad/*)
if(NOT headers)
  message(FATAL_ERROR "install_consumer: no headers installed under ${prefix}/include/stiffgrad")
endif()
foreach(h ${headers})
  file(STRINGS ${prefix}/include/${h} includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line ${includes})
    if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
      set(inc ${CMAKE_MATCH_1})
      get_filename_component(dir ${prefix}/include/${h} DIRECTORY)
      if(NOT EXISTS ${prefix}/include/${inc} AND NOT EXISTS ${dir}/${inc})
        message(FATAL_ERROR "install_consumer: ${h} includes \"${inc}\", which is not installed")
      endif()
    elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
      set(inc ${CMAKE_MATCH_1})
      # Standard library headers have no directory and no extension (<vector>, <cstdint>).
      if(inc MATCHES "[/.]")
        message(FATAL_ERROR "install_consumer: ${h} includes <${inc}>, not a standard header")
      endif()
    endif()
  endforeach()
endforeach()
list(LENGTH headers nheaders)
message(STATUS "[headers] ${nheaders} installed headers include only standard headers and each other")

# 3. Configure and build the consumer against the prefix, with this build's toolchain.
set(configure_args -S ${SG_CONSUMER_SOURCE} -B ${consumer_build} -G "${SG_GENERATOR}"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${SG_CXX_COMPILER})
if(SG_GENERATOR_PLATFORM)
  list(APPEND configure_args -A "${SG_GENERATOR_PLATFORM}")
endif()
if(SG_GENERATOR_TOOLSET)
  list(APPEND configure_args -T "${SG_GENERATOR_TOOLSET}")
endif()
if(SG_MAKE_PROGRAM)
  list(APPEND configure_args -DCMAKE_MAKE_PROGRAM=${SG_MAKE_PROGRAM})
endif()
if(NOT SG_CONFIG AND SG_BUILD_TYPE)
  list(APPEND configure_args -DCMAKE_BUILD_TYPE=${SG_BUILD_TYPE})
endif()
if(SG_CUDA_COMPILER)
  # The package's config runs find_dependency(CUDAToolkit): point it at the same toolkit.
  get_filename_component(cuda_bin ${SG_CUDA_COMPILER} DIRECTORY)
  get_filename_component(cuda_root ${cuda_bin} DIRECTORY)
  list(APPEND configure_args -DCUDAToolkit_ROOT=${cuda_root})
endif()
sg_run(configure ${CMAKE_COMMAND} ${configure_args})
sg_run(build ${CMAKE_COMMAND} --build ${consumer_build} ${config_args})

# 4. Run it.
set(app ${consumer_build}/bin/app${CMAKE_EXECUTABLE_SUFFIX})
if(NOT EXISTS ${app} AND EXISTS ${consumer_build}/bin/app.exe)
  set(app ${consumer_build}/bin/app.exe)
endif()
sg_run(run ${app})
message(STATUS "install_consumer: passed")
