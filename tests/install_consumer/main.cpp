// Uses an installed stiffgrad through its public headers only: load an inline pendulum,
// step it 10 times and check that it swung.
#include <cmath>
#include <cstdio>
#include <exception>
#include <stiffgrad/stiffgrad.hpp>
#include <vector>

namespace {

const char* kPendulum = R"(
<mujoco model="pendulum">
  <option timestep="0.01" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="pole" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="0.01"/>
      <inertial pos="0 0 -0.5" mass="1" diaginertia="0.02 0.02 0.001"/>
      <geom type="sphere" pos="0 0 -0.5" size="0.05"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="torque" joint="hinge" gear="1" ctrllimited="true" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
)";

}  // namespace

int main() {
  try {
    auto model = stiffgrad::load_mjcf_string(kPendulum, "pendulum.xml");
    if (model->nq != 1 || model->nv != 1 || model->nu != 1) {
      std::fprintf(stderr, "unexpected sizes nq %d nv %d nu %d\n", model->nq, model->nv, model->nu);
      return 1;
    }
    stiffgrad::SimulatorOptions opt;
    opt.nenv = 2;
    stiffgrad::Simulator sim(model, opt);
    sim.reset();
    const std::vector<double> qpos0 = {0.5, -0.5}, qvel0 = {0.0, 0.0}, ctrl = {0.0, 0.0};
    sim.set_state(qpos0.data(), qvel0.data());
    sim.set_ctrl(ctrl.data());
    for (int i = 0; i < 10; ++i) sim.step();
    sim.synchronize();
    std::vector<double> qpos(2), qvel(2);
    sim.get_state(qpos.data(), qvel.data());
    std::printf("after 10 steps: qpos %.6f %.6f  qvel %.6f %.6f\n", qpos[0], qpos[1], qvel[0],
                qvel[1]);
    // Released at +-0.5 rad, gravity swings each pendulum back towards 0, symmetrically.
    const bool moved = std::isfinite(qpos[0]) && qpos[0] < 0.5 - 1e-3 && qvel[0] < 0.0 &&
                       std::abs(qpos[0] + qpos[1]) < 1e-12 && sim.num_failed() == 0;
    if (!moved) {
      std::fprintf(stderr, "FAILED: the pendulum did not swing as expected\n");
      return 1;
    }
    std::printf("install consumer: OK (stiffgrad via find_package)\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED: %s\n", e.what());
    return 1;
  }
}
