// run_gradcheck: adjoint gradient of a fixed random loss, checked against finite differences
// (4-point central stencil of the same kernels in extended precision; plain double FD is
// reported beside it) on a random subset of inputs and against forward mode (dot-product test).
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "stiffgrad/gradcheck.hpp"
#include "stiffgrad/rollout.hpp"

namespace stiffgrad {

namespace {

struct Problem {
  std::vector<double> qpos, qvel, ctrl;  // ctrl: T x nu
};

Problem initial_problem(const Model& m, const GradcheckOptions& opt, std::mt19937_64& rng) {
  std::normal_distribution<double> n01(0.0, 1.0);
  Problem p;
  p.qpos = opt.qpos.empty() ? m.qpos0 : opt.qpos;
  if (opt.qpos.empty())
    for (int j = 0; j < m.njnt; ++j)
      if (m.jnt_type[j] == JointType::Hinge || m.jnt_type[j] == JointType::Slide)
        p.qpos[m.jnt_qposadr[j]] += 0.1 * n01(rng);
  p.qvel = opt.qvel;
  if (p.qvel.empty())
    for (int i = 0; i < m.nv; ++i) p.qvel.push_back(0.1 * n01(rng));
  for (int t = 0; t < opt.steps; ++t)
    for (int u = 0; u < m.nu; ++u) {
      double c;
      if (!opt.ctrl.empty()) c = opt.ctrl[u];
      else if (m.actuator_ctrllimited[u]) c = 0.5 * (m.actuator_ctrlrange[2 * u] + m.actuator_ctrlrange[2 * u + 1]) +
                                             0.1 * (m.actuator_ctrlrange[2 * u + 1] - m.actuator_ctrlrange[2 * u]) * n01(rng);
      else c = 0.1 * n01(rng);
      p.ctrl.push_back(c);
    }
  return p;
}

double final_loss(const Model& m, Simulator& sim, const Problem& p, int T, const std::vector<double>& w) {
  sim.set_state(p.qpos.data(), p.qvel.data());
  for (int t = 0; t < T; ++t) sim.step(p.ctrl.data() + static_cast<std::size_t>(t) * m.nu);
  std::vector<double> q(m.nq), v(m.nv);
  sim.get_state(q.data(), v.data());
  double L = 0;
  for (int i = 0; i < m.nq; ++i) L += w[i] * q[i];
  for (int i = 0; i < m.nv; ++i) L += w[m.nq + i] * v[i];
  return L;
}

void validate(const Model& m, const GradcheckOptions& opt) {
  if (opt.steps < 1 || opt.substeps < 1) throw std::invalid_argument("gradcheck: steps and substeps must be at least 1");
  if (opt.samples < 1)
    throw std::invalid_argument("gradcheck: samples must be at least 1 (with none, nothing would be checked)");
  if (m.nv == 0 && m.nu == 0) throw std::invalid_argument("gradcheck: the model has no degrees of freedom or actuators");
}

}  // namespace

// float: finite differences are taken in double, so the float adjoint differs from them by
// float rounding (eps 6e-8) amplified along the rollout; the dot-product test compares float
// adjoint with float forward mode, whose rounding differs only in the order of accumulation
// (docs/testing.md gives the measured figures)
GradcheckTolerance gradcheck_tolerance(Precision precision) {
  return precision == Precision::Float ? GradcheckTolerance{1e-2, 1e-4} : GradcheckTolerance{1e-6, 1e-10};
}

GradcheckReport run_gradcheck(const std::shared_ptr<const Model>& model, const GradcheckOptions& opt) {
  const Model& m = *model;
  validate(m, opt);
  const int T = opt.steps;
  std::mt19937_64 rng(opt.seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::vector<double> w(static_cast<std::size_t>(m.nq + m.nv));
  for (double& x : w) x = n01(rng);
  const Problem p = initial_problem(m, opt, rng);

  // adjoint gradient in the requested precision
  SimulatorOptions so;
  so.substeps = opt.substeps;
  so.precision = opt.precision;
  so.integrator = opt.integrator;
  so.adaptive = opt.adaptive;
  so.constraints = opt.constraints;
  so.contact_model = opt.contact_model;
  so.impulse = opt.impulse;
  so.threads = 1;
  Simulator sim(model, so);
  Rollout ro(sim, T);
  sim.set_state(p.qpos.data(), p.qvel.data());
  ro.begin();
  for (int t = 0; t < T; ++t) ro.step(p.ctrl.data() + static_cast<std::size_t>(t) * m.nu);
  std::vector<double> dq(static_cast<std::size_t>(T + 1) * m.nq, 0.0), dv(static_cast<std::size_t>(T + 1) * m.nv, 0.0);
  std::copy(w.begin(), w.begin() + m.nq, dq.begin() + static_cast<std::ptrdiff_t>(T) * m.nq);
  std::copy(w.begin() + m.nq, w.end(), dv.begin() + static_cast<std::ptrdiff_t>(T) * m.nv);
  std::vector<double> g_qpos(m.nv), g_qvel(m.nv), g_ctrl(static_cast<std::size_t>(T) * m.nu);
  ro.backward(dq.data(), dv.data(), g_qpos.data(), g_qvel.data(), g_ctrl.data());

  GradcheckReport rep;
  rep.replay_bitwise = ro.replay_bitwise();
  rollout_solver_iterations(m, p.qpos.data(), p.qvel.data(), p.ctrl.data(), T, opt.substeps, opt.integrator,
                            opt.constraints, &rep.constraint_solves, &rep.solves_at_iteration_cap, opt.adaptive,
                            opt.contact_model, opt.impulse);
  const GradcheckTolerance tol = gradcheck_tolerance(opt.precision);
  rep.tolerance = tol.relative;
  rep.dot_tolerance = tol.dot;

  // finite differences in double on a random subset of inputs
  SimulatorOptions sd = so;
  sd.precision = Precision::Double;
  Simulator ref(model, sd);
  const double h = opt.fd_step;
  const int n_inputs = m.nv + m.nv + T * m.nu;
  std::vector<double> fd_error;  // per row: what the extended-precision stencil can resolve
  for (int k = 0; k < opt.samples && n_inputs > 0; ++k) {
    const int idx = static_cast<int>(rng() % static_cast<std::uint64_t>(n_inputs));
    // extended-precision reference (step h) and, for comparison, plain double (step 1e-4)
    auto perturbed = [&](double s) {
      Problem q = p;
      if (idx < m.nv) {
        std::vector<double> delta(m.nv, 0.0);
        delta[idx] = s;
        integrate_tangent(m, q.qpos.data(), delta.data());
      } else if (idx < 2 * m.nv) {
        q.qvel[idx - m.nv] += s;
      } else {
        q.ctrl[idx - 2 * m.nv] += s;
      }
      return q;
    };
    auto eval = [&](double s) {
      const Problem q = perturbed(s);
      return final_loss(m, ref, q, T, w);
    };
    auto eval_ext = [&](double s) {
      const Problem q = perturbed(s);
      return rollout_loss_extended(m, q.qpos.data(), q.qvel.data(), q.ctrl.data(), T, opt.substeps, w.data(),
                                   opt.integrator, opt.constraints, opt.adaptive, opt.contact_model, opt.impulse);
    };
    // 4-point stencils at h and at 2h: their difference estimates the truncation error of the
    // first, and rounding (of 80-bit sums of size |f|) bounds what it can resolve at all
    const long double H = h;
    const long double f1 = eval_ext(h) - eval_ext(-h), f2 = eval_ext(2 * h) - eval_ext(-2 * h);
    const long double f4 = eval_ext(4 * h) - eval_ext(-4 * h);
    const double fd = static_cast<double>((8.0L * f1 - f2) / (12.0L * H));
    const double fd_2h = static_cast<double>((8.0L * f2 - f4) / (24.0L * H));
    const double f_scale = std::abs(static_cast<double>(eval_ext(0)));
    fd_error.push_back(std::max(std::abs(fd - fd_2h),
                                static_cast<double>(std::numeric_limits<long double>::epsilon()) *
                                    std::max(f_scale, 1e-300) / h));
    const double hd = 1e-4;
    const double fd_double = (8.0 * (eval(hd) - eval(-hd)) - (eval(2 * hd) - eval(-2 * hd))) / (12.0 * hd);
    GradcheckRow row;
    if (idx < m.nv) {
      row.input = "qpos0[tangent " + std::to_string(idx) + "]";
      row.adjoint = g_qpos[idx];
    } else if (idx < 2 * m.nv) {
      row.input = "qvel0[" + std::to_string(idx - m.nv) + "]";
      row.adjoint = g_qvel[idx - m.nv];
    } else {
      const int c = idx - 2 * m.nv;
      row.input = "ctrl[t=" + std::to_string(c / m.nu) + ",u=" + std::to_string(c % m.nu) + "]";
      row.adjoint = g_ctrl[c];
    }
    row.finite_difference = fd;
    row.finite_difference_double = fd_double;
    rep.rows.push_back(row);
    if (opt.progress) opt.progress(k + 1, opt.samples);
  }
  // Each probe passes when |adj - fd| <= tol |fd| + 10 e_fd + 1e3 eps g_max: relative to the
  // probe itself, plus what the finite difference cannot resolve (e_fd, above) and the
  // rounding of the run's own precision against the largest gradient probed (eps of float or
  // double). No fixed absolute floor: a zero gradient must come out as zero to that accuracy.
  double g_max = 0;
  for (const auto& row : rep.rows) g_max = std::max(g_max, std::abs(row.finite_difference));
  const double eps = opt.precision == Precision::Float ? static_cast<double>(std::numeric_limits<float>::epsilon())
                                                       : std::numeric_limits<double>::epsilon();
  for (std::size_t r = 0; r < rep.rows.size(); ++r) {
    GradcheckRow& row = rep.rows[r];
    const double slack = (10 * fd_error[r] + 1e3 * eps * g_max) / rep.tolerance;
    row.rel_error = std::abs(row.adjoint - row.finite_difference) / std::max(std::abs(row.finite_difference) + slack, 1e-300);
    rep.max_rel_error = std::max(rep.max_rel_error, row.rel_error);
    rep.max_rel_error_double_fd = std::max(
        rep.max_rel_error_double_fd,
        std::abs(row.adjoint - row.finite_difference_double) / std::max(std::abs(row.finite_difference_double) + slack, 1e-300));
  }

  // dot-product test: raw-coordinate adjoint vs dual-number forward mode, same precision
  {
    std::vector<double> uq(m.nq), uv(m.nv), uc(static_cast<std::size_t>(T) * m.nu);
    for (double& x : uq) x = n01(rng);
    for (double& x : uv) x = n01(rng);
    for (double& x : uc) x = n01(rng);
    const auto Ju = rollout_jvp(m, p.qpos.data(), p.qvel.data(), p.ctrl.data(), T, opt.substeps,
                                uq.data(), uv.data(), uc.data(), opt.precision, opt.integrator, opt.constraints,
                                opt.adaptive, opt.contact_model, opt.impulse);
    std::vector<double> r_qpos(m.nq);
    ro.backward_raw(dq.data(), dv.data(), r_qpos.data(), g_qvel.data(), g_ctrl.data());
    double lhs = 0, rhs = 0, scale = 0;
    for (int i = 0; i < m.nq + m.nv; ++i) { lhs += w[i] * Ju[i]; scale += std::abs(w[i] * Ju[i]); }
    for (int i = 0; i < m.nq; ++i) { rhs += r_qpos[i] * uq[i]; scale += std::abs(r_qpos[i] * uq[i]); }
    for (int i = 0; i < m.nv; ++i) { rhs += g_qvel[i] * uv[i]; scale += std::abs(g_qvel[i] * uv[i]); }
    for (std::size_t i = 0; i < uc.size(); ++i) { rhs += g_ctrl[i] * uc[i]; scale += std::abs(g_ctrl[i] * uc[i]); }
    rep.dot_residual = std::abs(lhs - rhs) / std::max(scale, 1e-300);
  }
  rep.passed = rep.max_rel_error <= rep.tolerance && rep.dot_residual <= rep.dot_tolerance &&
               rep.replay_bitwise;
  return rep;
}

}  // namespace stiffgrad
