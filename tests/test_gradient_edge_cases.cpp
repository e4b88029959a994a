// Gradient edge cases (issue 6, section 2) and the actuator clamp rule (section 6):
//  - the tangent-convention gradient of Rollout::backward() does not depend on the scale of an
//    initial quaternion (free and ball joints), and equals finite differences through
//    integrate_tangent (MuJoCo's mj_integratePos, which starts from q / |q|);
//  - quat_to_vel is smooth at the identity: forward mode (Dual) is finite and agrees with the
//    adjoint and with the exact derivative at zero and tiny rotation angles;
//  - gradcheck passes for every joint type at rest, with and without stiffness;
//  - the one clamp rule (kern::actuator_clamp) is what the forward kernel, its adjoint and the
//    implicit actuator damping follow.
#include <cmath>

#include "adjoint_support.hpp"
#include "kernels/step/batch_adjoint.hpp"
#include "stiffgrad/gradcheck.hpp"
#include "stiffgrad/rollout.hpp"

namespace {

using namespace sgadj;
using stiffgrad::Model;

std::shared_ptr<const Model> model_from(const std::string& xml, const std::string& name) {
  return stiffgrad::load_mjcf_string(xml, "/tmp/sg_edge_" + name + ".xml");
}

// One joint of the given type (and stiffness) on a body hanging off its anchor, a second body
// on a hinge below it and a motor on that hinge, so that the rollout has controls and
// coupled dynamics.
std::string one_joint_xml(const std::string& type, double stiffness) {
  const std::string axis = type == "slide" ? " axis=\"0.3 0.2 1\"" : (type == "hinge" ? " axis=\"0.2 1 0.1\"" : "");
  const std::string pos = type == "free" ? "" : " pos=\"0.02 -0.01 0.05\"";
  return "<mujoco model=\"one_" + type + "\"><option timestep=\"0.005\"/>"
         "<worldbody><body name=\"a\" pos=\"0 0 1\" quat=\"0.9 0.1 0.3 0.2\">"
         "<joint name=\"j\" type=\"" + type + "\"" + axis + pos + " stiffness=\"" + std::to_string(stiffness) +
         "\" damping=\"0.1\"/>"
         "<geom type=\"capsule\" fromto=\"0 0 0 0.3 0.05 -0.1\" size=\"0.05\"/>"
         "<body name=\"b\" pos=\"0.3 0.05 -0.1\"><joint name=\"h\" type=\"hinge\" axis=\"0 1 0\" stiffness=\"2\" damping=\"0.05\"/>"
         "<geom type=\"box\" size=\"0.15 0.03 0.02\" pos=\"0.15 0 0\" euler=\"10 20 30\"/></body></body></worldbody>"
         "<actuator><motor joint=\"h\" gear=\"1.5\" ctrlrange=\"-1 1\" ctrllimited=\"true\"/></actuator></mujoco>";
}

// ======================================================================== quaternion scale
struct TangentProblem {
  std::vector<double> qpos, qvel, ctrl;  // ctrl: T x nu
  std::vector<double> w_final, w_initial;  // loss weights on [qpos_T; qvel_T] and on qpos_0
};

// Tangent gradient of L = w_final . [qpos_T; qvel_T] + w_initial . qpos_0 (the second term reads
// the initial state directly, exercising add_direct_qpos_adjoint).
std::vector<double> tangent_gradient(const std::shared_ptr<const Model>& model, const TangentProblem& p, int T, int S) {
  const Model& m = *model;
  stiffgrad::SimulatorOptions so;
  so.substeps = S;
  so.threads = 1;
  stiffgrad::Simulator sim(model, so);
  stiffgrad::Rollout ro(sim, std::max(T, 1));
  sim.set_state(p.qpos.data(), p.qvel.data());
  ro.begin();
  for (int t = 0; t < T; ++t) ro.step(p.ctrl.data() + static_cast<std::size_t>(t) * m.nu);
  std::vector<double> dq(static_cast<std::size_t>(T + 1) * m.nq, 0.0), dv(static_cast<std::size_t>(T + 1) * m.nv, 0.0);
  for (int i = 0; i < m.nq; ++i) dq[static_cast<std::size_t>(T) * m.nq + i] += p.w_final[i];
  for (int i = 0; i < m.nv; ++i) dv[static_cast<std::size_t>(T) * m.nv + i] += p.w_final[m.nq + i];
  for (int i = 0; i < m.nq; ++i) dq[i] += p.w_initial[i];
  std::vector<double> g(m.nv), gv(m.nv), gc(static_cast<std::size_t>(std::max(T, 1)) * m.nu + 1);
  ro.backward(dq.data(), dv.data(), g.data(), gv.data(), gc.data());
  return g;
}

// The same loss at qpos_0 = integrate_tangent(qpos, delta), in extended precision.
long double tangent_loss(const std::shared_ptr<const Model>& model, const TangentProblem& p, int T, int S,
                         const std::vector<double>& delta) {
  const Model& m = *model;
  std::vector<double> q = p.qpos;
  stiffgrad::integrate_tangent(m, q.data(), delta.data());
  long double L = 0;
  if (T > 0) L = stiffgrad::rollout_loss_extended(m, q.data(), p.qvel.data(), p.ctrl.data(), T, S, p.w_final.data());
  else
    for (int i = 0; i < m.nq; ++i) L += static_cast<long double>(p.w_final[i]) * q[i];
  for (int i = 0; i < m.nq; ++i) L += static_cast<long double>(p.w_initial[i]) * q[i];
  return L;
}

TEST(GradientEdgeCases, TangentGradientIndependentOfQuaternionScale) {
  for (const std::string type : {"free", "ball"}) {
    const auto model = model_from(one_joint_xml(type, 1.5), "scale_" + type);
    const Model& m = *model;
    for (const int T : {0, 1, 6}) {
      const int S = 3;
      Rng rng(4100 + T);
      TangentProblem p;
      p.qpos.resize(m.nq);
      p.qvel.resize(m.nv);
      random_state(m, rng, StateScales{0.3, 0.5, 1.0, 1.0}, p.qpos.data(), p.qvel.data());
      p.ctrl.resize(static_cast<std::size_t>(std::max(T, 1)) * m.nu);
      for (double& c : p.ctrl) c = 0.3 * rng.normal();
      p.w_final = rng.normals(m.nq + m.nv);
      p.w_initial = rng.normals(m.nq);
      const auto g1 = tangent_gradient(model, p, T, S);
      TangentProblem p2 = p;  // the same rotation, |q| = 1.25
      const int qa = m.jnt_qposadr[0] + (type == "free" ? 3 : 0);
      for (int k = 0; k < 4; ++k) p2.qpos[qa + k] *= 1.25;
      const auto g2 = tangent_gradient(model, p2, T, S);
      double worst_scale = 0, worst_fd = 0;
      for (int i = 0; i < m.nv; ++i) {
        const double rel = std::fabs(g1[i] - g2[i]) / std::max(1.0, std::fabs(g1[i]));
        worst_scale = std::max(worst_scale, rel);
        EXPECT_LE(rel, 1e-12) << type << " T=" << T << " tangent " << i << ": " << g1[i] << " vs " << g2[i];
        // each against finite differences through integrate_tangent (4-point stencil, 80-bit)
        for (const TangentProblem* pp : {&p, &p2}) {
          const double h = 1e-5;
          auto L = [&](double s) {
            std::vector<double> delta(m.nv, 0.0);
            delta[i] = s;
            return tangent_loss(model, *pp, T, S, delta);
          };
          const double fd = static_cast<double>((8.0L * (L(h) - L(-h)) - (L(2 * h) - L(-2 * h))) / (12.0L * h));
          const double g = pp == &p ? g1[i] : g2[i];
          const double err = std::fabs(g - fd) / std::max(1.0, std::fabs(fd));
          worst_fd = std::max(worst_fd, err);
          EXPECT_LE(err, 1e-8) << type << " T=" << T << " tangent " << i << (pp == &p ? " |q|=1" : " |q|=1.25")
                               << ": adjoint " << g << " fd " << fd;
        }
      }
      std::printf("[edge] %-4s T=%d  |q|=1 vs 1.25: worst rel %.2e   vs FD(integrate_tangent): worst %.2e\n",
                  type.c_str(), T, worst_scale, worst_fd);
    }
  }
}

// ======================================================================== quat_to_vel at rest
// r(q) = 2 atan2(|v|, w) v / |v| (angle wrapped to (-pi, pi]) in long double, away from v = 0.
// For w < 0 the wrapped angle 2 atan2(|v|, w) - 2 pi is written -2 atan2(|v|, -w), free of
// the cancellation that the subtraction suffers at small angles.
void quat_to_vel_reference(const long double q[4], long double r[3]) {
  const long double n = std::sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  const long double a = q[0] < 0 ? -2 * std::atan2(n, -q[0]) : 2 * std::atan2(n, q[0]);
  for (int k = 0; k < 3; ++k) r[k] = a * q[k + 1] / n;
}

TEST(GradientEdgeCases, QuatToVelAtAndNearIdentityAgainstDual) {
  double worst_dot = 0, worst_val = 0, worst_jac = 0;
  int cases = 0;
  for (const double angle : {0.0, 1e-8, 1e-4, 1.9e-3, 2.1e-3, 1e-2, 0.5}) {
    for (const double scale : {1.0, 1.25}) {
      for (const double sign : {1.0, -1.0}) {  // q and -q: the same rotation, w < 0 wraps
        for (int seed = 0; seed < 4; ++seed) {
          Rng rng(4200 + seed);
          double axis[3] = {rng.normal(), rng.normal(), rng.normal()};
          kern::normalize3(axis);
          double q[4];
          kern::axis_angle_to_quat(q, axis, angle);
          for (double& c : q) c *= sign * scale;
          // forward mode on all four inputs at once (one Dual per direction e_k)
          double J[3][4];
          for (int k = 0; k < 4; ++k) {
            D x[4], y[3];
            for (int c = 0; c < 4; ++c) x[c] = D(q[c]);
            x[k].d[0] = 1.0;
            kern::quat_to_vel(y, x, D(1.0));
            for (int c = 0; c < 3; ++c) {
              ASSERT_TRUE(std::isfinite(y[c].v) && std::isfinite(y[c].d[0])) << "angle " << angle;
              J[c][k] = y[c].d[0];
            }
          }
          // dot product with the adjoint
          double u[4], w[3], aq[4] = {0, 0, 0, 0};
          for (double& c : u) c = rng.normal();
          for (double& c : w) c = rng.normal();
          kern::adj_quat_to_vel(q, aq, w);
          DotTest t;
          for (int c = 0; c < 3; ++c) t.out(w[c], J[c][0] * u[0] + J[c][1] * u[1] + J[c][2] * u[2] + J[c][3] * u[3]);
          for (int k = 0; k < 4; ++k) t.in(aq[k], u[k]);
          worst_dot = std::max(worst_dot, t.rel());
          EXPECT_TRUE(t.ok()) << "angle " << angle << " scale " << scale << ": " << t.str();
          ++cases;
          // value and Jacobian against the exact map: at v = 0 the limit dr = 2 dv / w, dr/dw = 0;
          // elsewhere the long-double atan2 form and its central differences
          double r[3];
          kern::quat_to_vel(r, q, 1.0);
          long double ql[4] = {q[0], q[1], q[2], q[3]}, rl[3] = {0, 0, 0};
          long double Jl[3][4] = {};
          if (angle == 0.0) {
            for (int c = 0; c < 3; ++c) Jl[c][c + 1] = 2.0L / ql[0];
          } else {
            quat_to_vel_reference(ql, rl);
            for (int k = 0; k < 4; ++k) {
              const long double h = 1e-6L * std::max(std::fabs(static_cast<double>(ql[k])), std::fabs(q[0]) * angle);
              long double qp[4] = {ql[0], ql[1], ql[2], ql[3]}, qm[4] = {ql[0], ql[1], ql[2], ql[3]}, rp[3], rm[3];
              qp[k] += h;
              qm[k] -= h;
              quat_to_vel_reference(qp, rp);
              quat_to_vel_reference(qm, rm);
              for (int c = 0; c < 3; ++c) Jl[c][k] = (rp[c] - rm[c]) / (2 * h);
            }
          }
          double nr = 0, nj = 0;
          for (int c = 0; c < 3; ++c) {
            nr = std::max(nr, std::fabs(static_cast<double>(rl[c])));
            for (int k = 0; k < 4; ++k) nj = std::max(nj, std::fabs(static_cast<double>(Jl[c][k])));
          }
          for (int c = 0; c < 3; ++c) {
            const double ev = std::fabs(r[c] - static_cast<double>(rl[c])) / std::max(nr, 1e-300);
            if (angle != 0.0) {
              worst_val = std::max(worst_val, ev);
              // for w < 0 outside the series branch, MuJoCo's wrap 2 atan2(|v|, w) - 2 pi (kept
              // for parity) cancels: a few roundings of 2 pi relative to the angle
              const bool wraps = q[0] < 0 && angle > 2e-3;
              EXPECT_LE(ev, wraps ? 1e-15 + 4 * 2.2e-16 * 2 * M_PI / angle : 1e-15) << "angle " << angle << " value " << c;
            } else {
              EXPECT_EQ(r[c], 0.0);
            }
            for (int k = 0; k < 4; ++k) {
              const double ej = std::fabs(J[c][k] - static_cast<double>(Jl[c][k])) / nj;
              worst_jac = std::max(worst_jac, ej);
              EXPECT_LE(ej, 1e-9) << "angle " << angle << " J[" << c << "][" << k << "]";
            }
          }
        }
      }
    }
  }
  std::printf("[edge] quat_to_vel at 0, 1e-8, 1e-4, around the series threshold, 1e-2, 0.5 rad (%d cases): "
              "dot-product %.2e, value vs exact %.2e, Dual Jacobian vs exact %.2e\n",
              cases, worst_dot, worst_val, worst_jac);
}

// ======================================================================== gradcheck at rest
TEST(GradientEdgeCases, GradcheckPassesAtRestForEveryJointType) {
  for (const std::string type : {"free", "ball", "hinge", "slide"}) {
    for (const double stiffness : {0.0, 50.0}) {
      const auto model = model_from(one_joint_xml(type, stiffness), "rest_" + type + std::to_string(stiffness > 0));
      const Model& m = *model;
      for (const bool at_rest : {true, false}) {
        stiffgrad::GradcheckOptions opt;
        opt.steps = 10;
        opt.substeps = 4;
        opt.samples = 12;
        if (at_rest) {  // exactly qpos0 (the springs' rest orientation), zero velocity
          opt.qpos = m.qpos0;
          opt.qvel.assign(m.nv, 0.0);
        }  // else gradcheck's default: qpos0 with hinge/slide offsets, small random velocities
        const auto rep = stiffgrad::run_gradcheck(model, opt);
        // the dual-number path itself: finite at the rest orientation
        std::vector<double> qv = opt.qvel.empty() ? std::vector<double>(m.nv, 0.0) : opt.qvel;
        std::vector<double> ctrl(static_cast<std::size_t>(opt.steps) * m.nu, 0.0), uq(m.nq, 1.0), uv(m.nv, 1.0),
            uc(ctrl.size(), 1.0);
        const auto Ju = stiffgrad::rollout_jvp(m, m.qpos0.data(), qv.data(), ctrl.data(), opt.steps, opt.substeps,
                                               uq.data(), uv.data(), uc.data());
        bool finite = true;
        for (double x : Ju) finite = finite && std::isfinite(x);
        std::printf("[edge] gradcheck %-5s stiffness %4.0f %-9s FD %.2e  dot %.2e  replay %s  dual %s  %s\n",
                    type.c_str(), stiffness, at_rest ? "at rest" : "default", rep.max_rel_error, rep.dot_residual,
                    rep.replay_bitwise ? "bitwise" : "NO", finite ? "finite" : "NON-FINITE", rep.passed ? "PASSED" : "FAILED");
        EXPECT_TRUE(finite) << type << " stiffness " << stiffness;
        EXPECT_TRUE(rep.passed) << type << " stiffness " << stiffness << (at_rest ? " at rest" : " default");
        EXPECT_LE(rep.max_rel_error, 1e-6);
        EXPECT_LE(rep.dot_residual, 1e-10);
      }
    }
  }
}

// ======================================================================== the clamp rule
TEST(ActuatorClampRule, ActiveStrictlyOutsideTheRange) {
  const double range[2] = {-1.0, 2.0};
  bool active = true;
  EXPECT_EQ(kern::actuator_clamp(0.5, 1, range, &active), 0.5);
  EXPECT_FALSE(active);
  EXPECT_EQ(kern::actuator_clamp(-1.0, 1, range, &active), -1.0);  // on a bound: inactive
  EXPECT_FALSE(active);
  EXPECT_EQ(kern::actuator_clamp(2.0, 1, range, &active), 2.0);
  EXPECT_FALSE(active);
  EXPECT_EQ(kern::actuator_clamp(std::nextafter(2.0, 3.0), 1, range, &active), 2.0);
  EXPECT_TRUE(active);
  EXPECT_EQ(kern::actuator_clamp(-7.0, 1, range, &active), -1.0);
  EXPECT_TRUE(active);
  EXPECT_EQ(kern::actuator_clamp(-7.0, 0, range, &active), -7.0);  // not limited: never active
  EXPECT_FALSE(active);
}

// On the model with every clamp kind (ctrl, force, joint total): the forward force, the
// adjoint's blocking and the implicit damping all follow actuator_clamps, checked against
// finite differences of the forward kernel (a clamp strictly active is locally constant).
TEST(ActuatorClampRule, ForwardAdjointAndImplicitDampingFollowIt) {
  Kit k(load_cached("inline:features"));
  auto m = k.m;
  m.implicit_actuator_damping = 1;
  Buf<double> d(k.o), dp(k.o), a(k.o);
  int blocked = 0, passed = 0, ctrl_blocked = 0;
  for (int seed = 0; seed < 200; ++seed) {
    Rng rng(4300 + seed);
    random_state(*k.model, rng, StateScales{0.5, 3.0, 0.5, 1.0}, d.d.qpos().p, d.d.qvel().p);
    random_ctrl(*k.model, rng, 1.6, d.d.ctrl().p);
    kern::fwd_dynamics(m, d.d, 0.0);
    for (int u = 0; u < m.nu; ++u) {
      const auto c = kern::actuator_clamps(m, d.d, u);
      const int j = m.actuator_trnid[u], da = m.jnt_dofadr[j];
      // forward: d qfrc_actuator[da] / d ctrl_u by central differences
      const double h = 1e-7;
      auto tau = [&](double s) {
        for (int i = 0; i < k.o.size; ++i) dp[i] = d[i];
        dp.d.ctrl()[u] += s;
        kern::actuator_forces(m, dp.d);
        return dp.d.qfrc_actuator()[da];
      };
      const double fd = (tau(h) - tau(-h)) / (2 * h);
      const double expect = (c.ctrl || c.force_blocked()) ? 0.0 : m.actuator_gear[u] * m.actuator_gainprm[3 * u];
      EXPECT_NEAR(fd, expect, 1e-6 * (1 + std::fabs(expect))) << "seed " << seed << " actuator " << u;
      // adjoint: ctrl_bar = d tau / d ctrl for a unit adjoint on the dof
      for (int i = 0; i < k.o.size; ++i) a[i] = 0.0;
      a.d.qfrc_actuator()[da] = 1.0;
      kern::adj_actuator_forces(m, d.d, a.d);
      EXPECT_EQ(a.d.ctrl()[u], expect) << "seed " << seed << " actuator " << u;
      // implicit damping: -gear^2 b2 on the dof's diagonal exactly when the force is not blocked
      if (m.actuator_biastype[u] == kern::kBiasAffine) {
        double own = 0.0;  // this actuator's share (other actuators of the dof subtracted)
        for (int i = 0; i < m.nv * m.nv; ++i) d.d.qLD()[i] = 0.0;
        kern::add_implicit_actuator_damping(m, d.d, 1.0);
        const double with = d.d.qLD()[da * m.nv + da];
        for (int v = 0; v < m.nu; ++v)
          if (v != u && m.jnt_dofadr[m.actuator_trnid[v]] == da && m.actuator_biastype[v] == kern::kBiasAffine &&
              !kern::actuator_clamps(m, d.d, v).force_blocked())
            own -= std::max(0.0, -m.actuator_gear[v] * m.actuator_gear[v] * m.actuator_biasprm[3 * v + 2]);
        own += with;
        const double k_u = std::max(0.0, -m.actuator_gear[u] * m.actuator_gear[u] * m.actuator_biasprm[3 * u + 2]);
        EXPECT_NEAR(own, c.force_blocked() ? 0.0 : k_u, 1e-14) << "seed " << seed << " actuator " << u;
      }
      (c.force_blocked() ? blocked : passed) += 1;
      ctrl_blocked += c.ctrl;
    }
  }
  std::printf("[edge] clamp rule on features: %d actuator-states blocked, %d passing, %d with the ctrl clamp active\n",
              blocked, passed, ctrl_blocked);
  EXPECT_GT(blocked, 0);
  EXPECT_GT(passed, 0);
  EXPECT_GT(ctrl_blocked, 0);
}

}  // namespace
