# Extra test targets, included from tests/CMakeLists.txt.

# MJCF loader under AddressSanitizer + UndefinedBehaviorSanitizer: the loader sources and a
# small driver, loading the malformed corpus (each file: a Model or an MjcfError) and the real
# models (each must load). Run with: ctest -L asan
if(STIFFGRAD_SANITIZE)
  file(GLOB SG_LOADER_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/mjcf/*.cpp)
  add_executable(stiffgrad_loader_asan
    ${SG_LOADER_SOURCES}
    ${PROJECT_SOURCE_DIR}/core/model.cpp
    # compilation ends with the candidate pairs and the qpos0 constants (mass matrix)
    ${PROJECT_SOURCE_DIR}/core/collision_pairs.cpp
    ${PROJECT_SOURCE_DIR}/core/model_setconst.cpp
    ${PROJECT_SOURCE_DIR}/core/dynamics.cpp
    ${PROJECT_SOURCE_DIR}/core/constraint_capacity.cpp
    ${PROJECT_SOURCE_DIR}/core/model_arrays.cpp
    ${PROJECT_SOURCE_DIR}/core/impulse_contact.cpp  # impulse_model_for (core/host_run.hpp)
    ${CMAKE_CURRENT_SOURCE_DIR}/loader_asan_driver.cpp)
  target_include_directories(stiffgrad_loader_asan PRIVATE
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR})
  target_link_libraries(stiffgrad_loader_asan PRIVATE tinyxml2::tinyxml2 Eigen3::Eigen Qhull::qhull_r)
  # -O0: the sanitizers check the same accesses, and CI compiles this target on every run. Its
  # objects took 103 s of compiler time at -O1 in a fresh-clone CI build and 39 s at -O0 (2-core
  # machine, make -j2); the test runs 0.8 s instead of 0.4 s.
  target_compile_options(stiffgrad_loader_asan PRIVATE
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O0)
  target_link_options(stiffgrad_loader_asan PRIVATE -fsanitize=address,undefined)

  set(SG_LOADER_ASAN_ARGS --corpus ${CMAKE_CURRENT_SOURCE_DIR}/data/malformed
                          --model ${SG_MUJOCO_MODELS}/humanoid/humanoid.xml)
  foreach(rel
      brax/ant.xml brax/half_cheetah.xml brax/hopper.xml brax/humanoid.xml brax/walker2d.xml
      dm_control/acrobot.xml dm_control/cartpole.xml dm_control/cheetah.xml dm_control/hopper.xml
      dm_control/humanoid.xml dm_control/humanoid_CMU.xml dm_control/pendulum.xml
      dm_control/walker.xml gymnasium/ant.xml gymnasium/half_cheetah.xml gymnasium/hopper.xml
      gymnasium/humanoid.xml gymnasium/inverted_double_pendulum.xml
      gymnasium/inverted_pendulum.xml gymnasium/walker2d.xml
      unitree_g1/g1_mjx_mujoco222.xml unitree_g1/scene_mjx.xml)
    list(APPEND SG_LOADER_ASAN_ARGS --model ${SG_DATA}/models/${rel})
  endforeach()
  add_test(NAME loader_asan COMMAND stiffgrad_loader_asan ${SG_LOADER_ASAN_ARGS})
  set_tests_properties(loader_asan PROPERTIES
    LABELS asan TIMEOUT 300
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1;UBSAN_OPTIONS=print_stacktrace=1")
endif()
