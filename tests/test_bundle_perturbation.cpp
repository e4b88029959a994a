// One BCG branch's perturbation (kernels/bundle/bundle_perturbation.hpp, issue 9): Cartesian noise on
// the bodies carrying contacts, mapped to generalized coordinates by the damped pseudoinverse
// Jᵀ(JJᵀ + λI)⁻¹. On humanoid.xml at a bent pose, both feet and a hand:
//  - with λ → 0 the map inverts J: J δq = δx to 1e-9 (J has full row rank here);
//  - with the paper's λ = 1e-4 the bodies still move by δx to 1e-2;
//  - applied on the manifold, the bodies' world positions move by δx to first order;
//  - the draws are a pure function of (seed, env, step, branch) and have the asked spread.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/model_arrays.hpp"
#include "kernels/bundle/bundle_perturbation.hpp"
#include "kernels/step/step.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;
using LC = kern::Contiguous;
using V = kern::View<double, LC>;

struct Scene {
  std::shared_ptr<const Model> model;
  ModelArrays<double> arrays;
  kern::ModelView<double> m;
  kern::DataLayout o;
  std::vector<double> buf, scratch, dq, dv;
  kern::Data<double, LC> d;
  std::vector<int> bodies;

  Scene()
      : model(load_mjcf(sgtest::humanoid_xml())), arrays(*model, ConstraintCapacity{}), m(arrays.host_view()),
        o(kern::DataLayout::make(m)), buf(static_cast<std::size_t>(o.size) + 1, 0.0),
        scratch(static_cast<std::size_t>(kern::bundle_perturbation_scratch_size(m)), 0.0),
        dq(static_cast<std::size_t>(m.nv)), dv(static_cast<std::size_t>(m.nv)) {
    d = kern::Data<double, LC>::bind(V{buf.data(), LC{}}, o);
    for (const char* name : {"right_foot", "left_foot", "left_hand"}) {
      const auto it = std::find(model->body_name.begin(), model->body_name.end(), name);
      if (it != model->body_name.end()) bodies.push_back(static_cast<int>(it - model->body_name.begin()));
    }
    // a bent pose: qpos0 with every hinge at 0.3 rad (no hinge at a limit's edge matters here)
    for (int i = 0; i < m.nq; ++i) d.qpos()[i] = model->qpos0[static_cast<std::size_t>(i)];
    for (int j = 0; j < model->njnt; ++j)
      if (model->jnt_type[static_cast<std::size_t>(j)] == JointType::Hinge)
        d.qpos()[model->jnt_qposadr[static_cast<std::size_t>(j)]] += 0.3;
    kern::fwd_position(m, d);
  }
  void perturb(double lambda, const kern::RandomStream& s, double sp = 0.01, double sv = 0.02) {
    kern::bundle_perturbation(m, d, bodies.data(), static_cast<int>(bodies.size()), sp, sv, lambda, s,
                              V{scratch.data(), LC{}}, V{dq.data(), LC{}}, V{dv.data(), LC{}});
  }
  // J δ (3K), with J the stacked translational point Jacobians at the bodies' origins
  std::vector<double> J_times(const std::vector<double>& x) {
    std::vector<double> jac(static_cast<std::size_t>(6 * m.nv)), out;
    for (int b : bodies) {
      std::fill(jac.begin(), jac.end(), 0.0);
      double p[3] = {d.xpos()[3 * b], d.xpos()[3 * b + 1], d.xpos()[3 * b + 2]};
      kern::add_point_jacobian(m, d, b, p, 1.0, V{jac.data(), LC{}});
      for (int r = 0; r < 3; ++r) {
        double s = 0;
        for (int i = 0; i < m.nv; ++i) s += jac[static_cast<std::size_t>(r * m.nv + i)] * x[static_cast<std::size_t>(i)];
        out.push_back(s);
      }
    }
    return out;
  }
};

// δx and δẋ as the kernel draws them: 2 x 3K normals of the stream, scaled.
std::vector<double> cartesian(const kern::RandomStream& s, int n, double sigma, int pass) {
  std::vector<double> z(static_cast<std::size_t>(2 * n));
  s.normals(2 * n, z.data());
  std::vector<double> out(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) out[static_cast<std::size_t>(r)] = sigma * z[static_cast<std::size_t>(pass * n + r)];
  return out;
}

double rel(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

TEST(BundlePerturbation, DampedPseudoinverseMovesTheBodiesByTheDraw) {
  Scene sc;
  ASSERT_EQ(sc.bodies.size(), 3u) << "humanoid.xml body names";
  const int n = 3 * static_cast<int>(sc.bodies.size());
  const kern::RandomStream s{7, 3, 11, 2};
  double worst_exact = 0, worst_damped = 0;
  for (double lambda : {1e-12, 1e-4}) {
    sc.perturb(lambda, s);
    const double ep = rel(sc.J_times(sc.dq), cartesian(s, n, 0.01, 0));
    const double ev = rel(sc.J_times(sc.dv), cartesian(s, n, 0.02, 1));
    (lambda < 1e-6 ? worst_exact : worst_damped) = std::max(ep, ev);
  }
  std::printf("[bundle] humanoid, 3 bodies: |J dq - dx| / |dx| %.1e at lambda 1e-12, %.1e at 1e-4\n", worst_exact,
              worst_damped);
  EXPECT_LT(worst_exact, 1e-9);
  EXPECT_LT(worst_damped, 1e-2);
}

TEST(BundlePerturbation, AppliedOnTheManifoldMovesBodiesToFirstOrder) {
  Scene sc;
  ASSERT_EQ(sc.bodies.size(), 3u);
  const int n = 3 * static_cast<int>(sc.bodies.size());
  const kern::RandomStream s{7, 3, 11, 2};
  sc.perturb(1e-4, s);
  std::vector<double> before;
  for (int b : sc.bodies)
    for (int c = 0; c < 3; ++c)
      before.push_back(sc.d.tree_origin()[3 * b + c] + sc.d.xpos()[3 * b + c]);
  kern::apply_bundle_perturbation(sc.m, sc.d, V{sc.dq.data(), LC{}}, V{sc.dv.data(), LC{}});
  kern::fwd_position(sc.m, sc.d);
  std::vector<double> moved;
  for (std::size_t k = 0; k < sc.bodies.size(); ++k)
    for (int c = 0; c < 3; ++c) {
      const int b = sc.bodies[k];
      moved.push_back(sc.d.tree_origin()[3 * b + c] + sc.d.xpos()[3 * b + c] -
                      before[3 * k + static_cast<std::size_t>(c)]);
    }
  const double e = rel(moved, cartesian(s, n, 0.01, 0));
  std::printf("[bundle] applied: world displacement of the bodies vs dx (sigma 1 cm) %.1e relative\n", e);
  EXPECT_LT(e, 0.1);  // second-order terms of a 1 cm move on ~0.3 m links
}

TEST(BundlePerturbation, DrawsAreKeyedAndHaveTheAskedSpread) {
  Scene sc;
  ASSERT_EQ(sc.bodies.size(), 3u);
  const kern::RandomStream s{7, 3, 11, 2};
  sc.perturb(1e-4, s);
  const std::vector<double> first = sc.dq;
  sc.perturb(1e-4, s);
  EXPECT_TRUE(sc.dq == first) << "a replay must draw the same perturbation";
  sc.perturb(1e-4, kern::RandomStream{7, 3, 11, 3});
  EXPECT_FALSE(sc.dq == first) << "another branch must draw another";
  // spread of the bodies' displacement J δq over 2000 branches: sigma_p per coordinate
  double sum2 = 0;
  int count = 0;
  for (std::uint32_t br = 0; br < 2000; ++br) {
    sc.perturb(1e-4, kern::RandomStream{9, 0, 0, br});
    for (double x : sc.J_times(sc.dq)) {
      sum2 += x * x;
      ++count;
    }
  }
  const double sd = std::sqrt(sum2 / count);
  std::printf("[bundle] spread of the bodies' displacement over 2000 branches: %.4f m (asked 0.01)\n", sd);
  EXPECT_NEAR(sd, 0.01, 0.0005);
}

}  // namespace
