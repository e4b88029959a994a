// The stream-ordering API of Simulator (stiffgrad/simulator.hpp, "Streams") on the CPU
// backend, where it must exist and be inert: no stream, ordering calls that change nothing,
// an options stream that is ignored. The CUDA side is tests/gpu/test_gpu_stream.cpp.
#include <gtest/gtest.h>

#include <vector>

#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

TEST(SimulatorStream, CpuBackendHasNoStreamAndOrderingIsInert) {
  const auto model = load_mjcf(sgtest::humanoid_xml());
  const int nenv = 3;
  SimulatorOptions opt;
  opt.nenv = nenv;
  opt.substeps = 2;
  Simulator plain(model, opt);
  // A bogus handle: the CPU backend must ignore it, never dereference it.
  int not_a_stream = 0;
  opt.cuda_stream = &not_a_stream;
  Simulator ordered(model, opt);
  EXPECT_EQ(plain.cuda_stream(), nullptr);
  EXPECT_EQ(ordered.cuda_stream(), nullptr);

  const std::vector<double> ctrl(static_cast<std::size_t>(nenv) * model->nu, 0.2);
  for (int t = 0; t < 3; ++t) {
    plain.step_backend_ctrl(ctrl.data());
    ordered.wait_for_stream(nullptr);
    ordered.wait_for_stream(&not_a_stream);
    ordered.step_backend_ctrl(ctrl.data());
    ordered.make_stream_wait(&not_a_stream);
  }
  std::vector<double> q1(nenv * model->nq), v1(nenv * model->nv), q2(q1.size()), v2(v1.size());
  plain.get_state(q1.data(), v1.data());
  ordered.get_state(q2.data(), v2.data());
  EXPECT_EQ(q1, q2);
  EXPECT_EQ(v1, v2);
}

}  // namespace
