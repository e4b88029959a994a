// run_gradcheck (the library side of `stiffgrad gradcheck`) on the setting, T = 50
// control steps of S = 4 substeps at each model's own timestep, default integrator: the
// adjoint gradient against central finite differences of the same kernels in extended
// precision (double finite differences are noise-limited on the G1 at 4 ms, whose wrist
// servos chatter under explicit actuator damping) and against forward mode.
#include <gtest/gtest.h>

#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

TEST(Gradcheck, NativeTimestepT50S4) {
  for (const std::string path : {sgtest::humanoid_xml(),
                                 sgtest::shared_data() + "/models/unitree_g1/scene_mjx.xml",
                                 sgtest::shared_data() + "/models/unitree_g1/g1_mjx_mujoco222.xml",
                                 sgtest::shared_data() + "/models/brax/ant.xml"}) {
    GradcheckOptions opt;
    opt.steps = 50;
    opt.substeps = 4;
    opt.samples = 10;
    const auto rep = run_gradcheck(load_mjcf(path), opt);
    std::printf("[gradcheck] %-60s FD(extended) %.2e  FD(double) %.2e  dot %.2e  replay %s\n", path.c_str(),
                rep.max_rel_error, rep.max_rel_error_double_fd, rep.dot_residual, rep.replay_bitwise ? "bitwise" : "NO");
    EXPECT_LE(rep.max_rel_error, 1e-6) << path;
    EXPECT_LE(rep.dot_residual, 1e-10) << path;
    EXPECT_TRUE(rep.replay_bitwise) << path;
  }
}

}  // namespace
