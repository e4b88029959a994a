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

// With constraints (contacts, limits, friction loss: on by default). The G1 files set
// iterations="5" (an MJX setting), where the Newton solve stops before convergence on these
// rollouts: the adjoint is then the implicit gradient at the point returned (forward and
// reverse mode agree on it: the dot-product test), which is not the derivative of the truncated
// iteration that finite differences see (docs/physics/constraints.md, "Known limits"). The G1 is therefore checked
// against finite differences with iterations raised to 50, and at its own 5 by the dot-product
// test alone.
std::shared_ptr<const Model> with_iterations(const std::shared_ptr<const Model>& m, int iterations) {
  auto copy = std::make_shared<Model>(*m);
  copy->opt.iterations = iterations;
  return copy;
}

TEST(Gradcheck, NativeTimestepT50S4) {
  const std::string g1 = sgtest::data_dir() + "/models/unitree_g1/";
  for (const std::string path : {sgtest::humanoid_xml(), g1 + "scene_mjx.xml", g1 + "g1_mjx_mujoco222.xml",
                                 sgtest::data_dir() + "/models/brax/ant.xml"}) {
    const auto model = load_mjcf(path);
    const bool truncated = model->opt.iterations < 50;
    GradcheckOptions opt;
    opt.steps = 50;
    opt.substeps = 4;
    opt.samples = 10;
    for (bool raise : {false, true}) {
      if (raise && !truncated) continue;
      const auto rep = run_gradcheck(raise ? with_iterations(model, 50) : model, opt);
      std::printf("[gradcheck] %-60s iterations %2d  FD(extended) %.2e  FD(double) %.2e  dot %.2e  replay %s  "
                  "solves at the cap %d/%d\n",
                  path.c_str(), raise ? 50 : model->opt.iterations, rep.max_rel_error, rep.max_rel_error_double_fd,
                  rep.dot_residual, rep.replay_bitwise ? "bitwise" : "NO", rep.solves_at_iteration_cap,
                  rep.constraint_solves);
      // the G1 at its own 5 iterations is the documented case: FD sees the truncated iteration,
      // and the report names the cause (solves cut short by the cap). Everywhere else FD must
      // agree, with raised iterations because every solve converged, and on the ant at its own
      // 4 because the few capped solves there stop close enough to the optimum.
      if (!raise && path.find("unitree_g1") != std::string::npos) {
        EXPECT_GT(rep.solves_at_iteration_cap, 0) << path;
      } else {
        EXPECT_LE(rep.max_rel_error, 1e-6) << path;
        if (raise) EXPECT_EQ(rep.solves_at_iteration_cap, 0) << path;
      }
      EXPECT_GT(rep.constraint_solves, 0) << path;
      EXPECT_LE(rep.dot_residual, 1e-10) << path;
      EXPECT_TRUE(rep.replay_bitwise) << path;
    }
  }
}

}  // namespace
