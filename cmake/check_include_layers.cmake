# Fails when a source file includes across the layout's lines (docs/architecture.md, "Layout"):
#   kernels/   only kernels/ (the one source of physics depends on nothing else)
#   include/   only stiffgrad/ (the public headers; the install test checks the installed copy)
#   core/, mjcf/   no backends/, learn/ or apps/
#   backends/  no learn/ or apps/
#   learn/     of core/ only the task-kernel interface (core/task_kernel_model.hpp), of backends/
#              only backends/cuda/cuda_support.cuh, no mjcf/ or apps/
# Run by the include_layers test:  cmake -DROOT=<repository> -P check_include_layers.cmake
set(violations "")
function(check_folder folder forbidden_regex)
  file(GLOB_RECURSE files "${ROOT}/${folder}/*.hpp" "${ROOT}/${folder}/*.cpp" "${ROOT}/${folder}/*.cuh"
       "${ROOT}/${folder}/*.cu" "${ROOT}/${folder}/*.h")
  foreach(f IN LISTS files)
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" target "${line}")
      if(target MATCHES "${forbidden_regex}")
        file(RELATIVE_PATH rel "${ROOT}" "${f}")
        list(APPEND violations "${rel} includes ${target}")
      endif()
    endforeach()
  endforeach()
  set(violations "${violations}" PARENT_SCOPE)
endfunction()

check_folder(kernels "^(core|mjcf|backends|learn|apps|include|stiffgrad)/")
check_folder(include "^(core|mjcf|backends|learn|apps|kernels)/")
check_folder(core "^(backends|learn|apps)/")
check_folder(mjcf "^(backends|learn|apps)/")
check_folder(backends "^(learn|apps)/")
check_folder(learn "^(apps|mjcf)/|^core/(.*)$|^backends/(.*)$")
# learn/'s two allowed doors are removed from the list again
list(FILTER violations EXCLUDE REGEX "^learn/.* includes (core/task_kernel_model\\.hpp|backends/cuda/cuda_support\\.cuh)$")

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "includes across the layout's lines (docs/architecture.md):\n  ${text}")
endif()
message(STATUS "include layers: no file crosses them")
