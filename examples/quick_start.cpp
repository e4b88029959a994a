// Load a model, step 1024 environments in float, read the states back.
#include <cstdio>
#include <vector>

#include <stiffgrad/stiffgrad.hpp>

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/usr/share/mujoco/model/humanoid/humanoid.xml";
  auto model = stiffgrad::load_mjcf(path);          // std::shared_ptr<const Model>
  stiffgrad::SimulatorOptions opt;
  opt.nenv = 1024;                                  // environments stepped in parallel
  opt.backend = stiffgrad::Backend::Cpu;            // or Backend::Cuda (cuda_available())
  opt.precision = stiffgrad::Precision::Float;      // or Precision::Double
  stiffgrad::Simulator sim(model, opt);
  sim.reset();                                      // qpos0, zero velocity and control
  std::vector<double> qpos(opt.nenv * model->nq), qvel(opt.nenv * model->nv),
                      ctrl(opt.nenv * model->nu, 0.1);
  for (int t = 0; t < 100; ++t) sim.step(ctrl.data());  // one control step, all environments
  sim.synchronize();                                // wait for the GPU (no-op on the CPU)
  sim.get_state(qpos.data(), qvel.data());          // host arrays, environment-major
  std::printf("root height %.4f m, %d environments failed\n", qpos[2], sim.num_failed());
  return sim.num_failed() == 0 ? 0 : 1;
}
