// Dot-product test of adj_ltdl_solve: x = H^-1 b for the factor of a real model's M + h D; and
// ltdl_solve_chain, the solve of a right side that lives on one dof's chain, equals the full
// solve bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/model_arrays.hpp"
#include "kernels/base/ldl_adjoint.hpp"
#include "kernels/step/step.hpp"
#include "stiffgrad/mjcf.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;
using CL = kern::Contiguous;

// A model at qpos0 with random velocities after fwd_dynamics, which leaves the factor of
// M + h D in d.qLD.
struct Factored {
  std::shared_ptr<const Model> model;
  ModelArrays<double> arrays;
  kern::ModelView<double> m;
  kern::DataLayout layout;  // d reads its offsets here
  std::vector<double> buf;
  kern::Data<double, CL> d;
  Factored(const std::string& path, std::mt19937_64& rng)
      : model(load_mjcf(path)),
        arrays(*model),
        m(arrays.host_view()),
        layout(kern::DataLayout::make(m)) {
    buf.resize(static_cast<std::size_t>(layout.size));
    d = kern::Data<double, CL>::bind({buf.data(), {}}, layout);
    std::normal_distribution<double> n01;
    for (int i = 0; i < m.nq; ++i) d.qpos()[i] = model->qpos0[i];
    for (int i = 0; i < m.nv; ++i) d.qvel()[i] = n01(rng);
    kern::fwd_dynamics(m, d, m.timestep);
  }
};

TEST(AdjointLdl, SolveDotProduct) {
  for (const std::string path : {sgtest::humanoid_xml(), sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml",
                                 sgtest::data_dir() + "/models/dm_control/cartpole.xml"}) {
    std::mt19937_64 rng(3);
    std::normal_distribution<double> n01;
    const Factored f(path, rng);
    const auto& m = f.m;
    const auto& d = f.d;
    std::vector<double> b(m.nv), w(m.nv);
    for (double& x : b) x = n01(rng);
    for (double& x : w) x = n01(rng);
    std::vector<double> x = b, bbar = w;
    kern::ltdl_solve(m, d.qLD(), kern::View<double, CL>{x.data(), {}});
    kern::adj_ltdl_solve(m, d.qLD(), kern::View<double, CL>{bbar.data(), {}});
    double lhs = 0, rhs = 0, scale = 0;
    for (int i = 0; i < m.nv; ++i) {
      lhs += w[i] * x[i];
      rhs += bbar[i] * b[i];
      scale += std::abs(w[i] * x[i]) + std::abs(bbar[i] * b[i]);
    }
    EXPECT_LE(std::abs(lhs - rhs), 1e-12 * scale) << path;
    // and the solve is a solve: M x = b - h D x, through the stored (dense) mass matrix
    for (int i = 0; i < m.nv; ++i) {
      double r = m.timestep * m.dof_damping[i] * x[i] - b[i];
      for (int j = 0; j < m.nv; ++j) r += d.qM()[i * m.nv + j] * x[j];
      EXPECT_NEAR(r, 0.0, 1e-10 * (1 + std::abs(b[i]))) << path << " row " << i;
    }
  }
}

// Every dof's chain, with a random right side on it (a constraint row's pattern) and with the unit
// vector of the leaf (a limit or friction-loss row): the chain solve skips only exact zeros.
TEST(AdjointLdl, ChainSolveEqualsTheFullSolve) {
  int chains = 0;
  for (const std::string path : {sgtest::humanoid_xml(), sgtest::data_dir() + "/models/unitree_g1/scene_mjx.xml"}) {
    std::mt19937_64 rng(5);
    std::normal_distribution<double> n01;
    const Factored f(path, rng);
    const auto& m = f.m;
    const auto& d = f.d;
    for (int leaf = 0; leaf < m.nv; ++leaf)
      for (const bool unit : {false, true}) {
        std::vector<double> b(m.nv, 0.0);
        for (int p = 0; p < m.dof_chainnum[leaf]; ++p) b[m.dof_chain[m.dof_chainadr[leaf] + p]] = unit ? (p == 0) : n01(rng);
        std::vector<double> full = b, chain = b;
        kern::ltdl_solve(m, d.qLD(), kern::View<double, CL>{full.data(), {}});
        kern::ltdl_solve_chain(m, d.qLD(), kern::View<double, CL>{chain.data(), {}}, leaf);
        EXPECT_TRUE(chain == full) << path << " leaf " << leaf << (unit ? " unit" : " random");
        ++chains;
      }
  }
  EXPECT_GT(chains, 100);
}

}  // namespace
