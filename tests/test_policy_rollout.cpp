// Rollout::backward_policy: the exact gradient of a loss over a trajectory in which every
// control is a function of the state it is applied in (a policy in the loop, SHAC's setting),
// against central finite differences of the whole closed-loop rollout, in double.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;

// A closed-loop rollout: ctrl_t = tanh(K [qpos_t; qvel_t] + b) (K: nu x (nq + nv)), loss
// L = Σ_t c_q·qpos_{t+1} + c_v·qvel_{t+1} + ½ Σ_t |ctrl_t|². Returns L and, when grad is given,
// dL/d(K, b) from backward_policy.
struct ClosedLoop {
  std::shared_ptr<const Model> model;
  SimulatorOptions opt;
  int T;
  std::vector<double> q0, v0, cq, cv;  // start (nenv x ...), loss weights (nq, nv)
  mutable int contact_steps = 0;       // steps of the last run() in which some environment touched

  int nx() const { return model->nq + model->nv; }
  int nparam() const { return model->nu * (nx() + 1); }

  double run(const std::vector<double>& theta, std::vector<double>* grad, bool* replay = nullptr) const {
    const int nq = model->nq, nv = model->nv, nu = model->nu, N = opt.nenv, n = nx();
    Simulator sim(model, opt);
    sim.set_state(q0.data(), v0.data());
    Rollout ro(sim, T);
    ro.begin();
    std::vector<double> Q((T + 1) * N * nq), V((T + 1) * N * nv), U(T * N * nu), pre(T * N * nu);
    sim.get_state(Q.data(), V.data());
    double L = 0;
    contact_steps = 0;
    for (int t = 0; t < T; ++t) {
      for (int e = 0; e < N; ++e)
        for (int i = 0; i < nu; ++i) {
          double z = theta[i * (n + 1) + n];
          for (int k = 0; k < nq; ++k) z += theta[i * (n + 1) + k] * Q[(t * N + e) * nq + k];
          for (int k = 0; k < nv; ++k) z += theta[i * (n + 1) + nq + k] * V[(t * N + e) * nv + k];
          pre[(t * N + e) * nu + i] = z;
          U[(t * N + e) * nu + i] = std::tanh(z);
          L += 0.5 * U[(t * N + e) * nu + i] * U[(t * N + e) * nu + i];
        }
      ro.step(U.data() + t * N * nu);
      const std::vector<double> stats = sim.contact_stats();
      for (int e = 0; e < N; ++e)
        if (stats[e * Simulator::kStepStats] > 0) { ++contact_steps; break; }
      sim.get_state(Q.data() + (t + 1) * N * nq, V.data() + (t + 1) * N * nv);
      for (int e = 0; e < N; ++e) {
        for (int k = 0; k < nq; ++k) L += cq[k] * Q[((t + 1) * N + e) * nq + k];
        for (int k = 0; k < nv; ++k) L += cv[k] * V[((t + 1) * N + e) * nv + k];
      }
    }
    if (!grad) return L;
    std::vector<double> dq((T + 1) * N * nq, 0.0), dv((T + 1) * N * nv, 0.0);
    for (int t = 1; t <= T; ++t)
      for (int e = 0; e < N; ++e) {
        for (int k = 0; k < nq; ++k) dq[(t * N + e) * nq + k] = cq[k];
        for (int k = 0; k < nv; ++k) dv[(t * N + e) * nv + k] = cv[k];
      }
    grad->assign(theta.size(), 0.0);
    ro.backward_policy(dq.data(), dv.data(), [&](int t, const double* adj_ctrl, double* adj_qpos, double* adj_qvel) {
      for (int e = 0; e < N; ++e)
        for (int i = 0; i < nu; ++i) {
          const double u = U[(t * N + e) * nu + i];
          // dL/du: through the dynamics (adj_ctrl) and the direct ½u² term; then through tanh
          const double dz = (adj_ctrl[e * nu + i] + u) * (1 - u * u);
          (*grad)[i * (n + 1) + n] += dz;
          for (int k = 0; k < nq; ++k) {
            (*grad)[i * (n + 1) + k] += dz * Q[(t * N + e) * nq + k];
            adj_qpos[e * nq + k] += dz * theta[i * (n + 1) + k];
          }
          for (int k = 0; k < nv; ++k) {
            (*grad)[i * (n + 1) + nq + k] += dz * V[(t * N + e) * nv + k];
            adj_qvel[e * nv + k] += dz * theta[i * (n + 1) + nq + k];
          }
        }
    });
    if (replay) *replay = ro.replay_bitwise();
    return L;
  }
};

void check_against_fd(ClosedLoop& c, double h, double bound) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<double> theta(c.nparam());
  for (double& x : theta) x = 0.3 * n(rng);
  std::vector<double> g;
  bool replay = false;
  c.run(theta, &g, &replay);
  EXPECT_TRUE(replay);
  // every parameter's central difference, and the largest error relative to the gradient's norm
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    std::vector<double> tp = theta, tm = theta;
    tp[i] += h;
    tm[i] -= h;
    const double fd = (c.run(tp, nullptr) - c.run(tm, nullptr)) / (2 * h);
    err = std::max(err, std::abs(fd - g[i]));
    norm = std::max(norm, std::abs(fd));
  }
  ASSERT_GT(norm, 1e-6) << "the test's loss does not depend on the parameters";
  EXPECT_LT(err / norm, bound) << "max |FD - adjoint| " << err << " of max |FD| " << norm;
  std::printf("[ policy-in-loop ] %s: max |FD - adjoint| / max |FD| = %.2e (%zu parameters)\n",
              c.model->name.c_str(), err / norm, theta.size());
}

TEST(PolicyRollout, CartpoleClosedLoopGradientMatchesFiniteDifferences) {
  ClosedLoop c;
  c.model = load_mjcf(sgtest::shared_data() + "/models/dm_control/cartpole.xml");
  c.opt.nenv = 3;
  c.opt.substeps = 2;
  c.T = 25;
  for (int e = 0; e < c.opt.nenv; ++e) {
    c.q0.insert(c.q0.end(), {0.1 * e, 3.0 + 0.1 * e});
    c.v0.insert(c.v0.end(), {0.0, 0.2 * e});
  }
  c.cq = {0.3, 1.0};
  c.cv = {0.1, -0.2};
  // central differences at h = 1e-6: truncation ~h² |L'''| and rounding ~1e-16 |L| / h, both
  // below 1e-8 of the gradient here
  check_against_fd(c, 1e-6, 1e-6);
}

TEST(PolicyRollout, AntOnImpulseFloorClosedLoopGradientMatchesFiniteDifferences) {
  ClosedLoop c;
  auto m = std::make_shared<Model>(*load_mjcf(sgtest::shared_data() + "/models/gymnasium/ant.xml"));
  m->opt.timestep = 0.005;
  c.model = m;
  c.opt.nenv = 2;
  c.opt.substeps = 4;
  c.opt.contact_model = ContactModel::Impulse;
  c.opt.impulse.kappa = 100;
  c.T = 6;
  // resting on the floor: at qpos0's joint angles the legs are level with the torso, so the
  // torso sphere (radius 0.25) carries the ant; qpos0's 0.75 m is lowered until it touches
  for (int e = 0; e < c.opt.nenv; ++e) {
    std::vector<double> q(m->qpos0.begin(), m->qpos0.end());
    q[2] = 0.26 + 0.01 * e;
    c.q0.insert(c.q0.end(), q.begin(), q.end());
    for (int k = 0; k < m->nv; ++k) c.v0.push_back(0.01 * k);
  }
  c.cq.assign(m->nq, 0.0);
  c.cv.assign(m->nv, 0.0);
  c.cq[2] = 1.0;   // torso height
  c.cv[0] = 0.5;   // forward velocity
  // K over 15 + 14 state entries for 8 actuators: keep the feedback small so that the loop is
  // not dominated by the quaternion entries
  check_against_fd(c, 1e-6, 1e-5);
  // the gradient went through contacts: the ant touches the floor in every step
  std::vector<double> g;
  c.run(std::vector<double>(c.nparam(), 0.0), &g);
  EXPECT_EQ(c.contact_steps, c.T);
}

TEST(PolicyRollout, EmptyHookIsRefused) {
  auto model = load_mjcf(sgtest::shared_data() + "/models/dm_control/cartpole.xml");
  SimulatorOptions o;
  Simulator sim(model, o);
  Rollout ro(sim, 2);
  ro.begin();
  ro.step();
  EXPECT_THROW(ro.backward_policy(nullptr, nullptr, ControlVjp{}), std::invalid_argument);
}

}  // namespace
