// adj_constraint_solve (kernels/constraint/solver_adjoint.hpp): the implicit adjoint of the converged
// Newton solve, on MuJoCo 2.2.2's own constraint rows and mass matrices (so that only the solve
// is under test), taken from states along MuJoCo's simulation with the solver converged
// (warmstart off, tolerance 1e-14, 200 iterations).
//
// Inputs θ = (qM, qfrc_smooth, efc_J, efc_aref, efc_D, efc_R) with qacc_smooth = M⁻¹qfrc_smooth
// recomputed from them (a_s is not an independent input: M a_s = qfrc_smooth); outputs qacc and
// efc_force. The M part of the adjoint is the caller's (−λ aᵀ with λ = a.qacc_smooth, see the
// header), so the tests add −λᵀ dM a to the adjoint side: that checks λ too.
//   dot product: forward mode runs constraint_solve itself on Dual<double>, its tangent refined
//     at the returned point until the Dual derivative of g vanishes (see dual_tangent), the
//     adjoint gives Jᵀw; w·(J u) = (Jᵀw)·u, for weights on qacc and on efc_force separately.
//   finite differences: central differences (4th order) of the double solve along random
//     directions against the same adjoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "adjoint_support.hpp"
#include "kernels/constraint/solver_adjoint.hpp"
#include "mujoco_bridge.hpp"
#include "test_support.hpp"

namespace {

namespace kern = stiffgrad::kern;
using Dd = kern::Dual<double, 1>;
using LC = kern::Contiguous;

constexpr double kDotRel = 1e-9;  // brief: relative dot-product residual
constexpr double kFdRel = 1e-6;   // brief: relative error against central differences

// One solve's inputs in double (MuJoCo's, dense) and a direction in the same coordinates.
struct Theta {
  int nv = 0, nefc = 0;
  std::vector<double> M, b, J, aref, D, R;  // b = qfrc_smooth
};

struct Rows {  // the parts of a problem that carry no derivative
  std::vector<int> type, dim;
  std::vector<double> floss, mu;
  double meaninertia = 1;
};

struct Sample {
  Theta th;
  Rows rows;
};

Sample sample_of(const mjModel* mm, const mjData* md) {
  Sample s;
  const int nv = mm->nv, ne = md->nefc;
  s.th.nv = nv;
  s.th.nefc = ne;
  s.th.M.resize(static_cast<std::size_t>(nv) * nv);
  mj_fullM(mm, s.th.M.data(), md->qM);
  s.th.b.assign(md->qfrc_smooth, md->qfrc_smooth + nv);
  s.th.J.assign(md->efc_J, md->efc_J + static_cast<std::size_t>(ne) * nv);
  s.th.aref.assign(md->efc_aref, md->efc_aref + ne);
  s.th.D.assign(md->efc_D, md->efc_D + ne);
  s.th.R.assign(md->efc_R, md->efc_R + ne);
  s.rows.meaninertia = mm->stat.meaninertia;
  for (int i = 0; i < ne; ++i) {
    s.rows.type.push_back(md->efc_type[i]);
    s.rows.floss.push_back(md->efc_frictionloss[i]);
    const bool ell = md->efc_type[i] == mjCNSTR_CONTACT_ELLIPTIC;
    const mjContact* con = ell ? &md->contact[md->efc_id[i]] : nullptr;
    const int k = ell ? i - con->efc_address : 0;
    s.rows.mu.push_back(!ell ? 0.0 : (k == 0 ? con->mu : con->friction[k - 1]));
    s.rows.dim.push_back(ell ? con->dim : 0);
  }
  return s;
}

// θ + e·dθ written into a Data in Real; direction components are Real too, so that a Dual
// carries them as its tangent (e = 0, dθ in the tangent) and a double run takes a step.
template <class Real>
struct Solve {
  kern::ModelView<Real> m{};
  sgtest::SerialDofChain chain;
  kern::DataLayout o{};
  std::vector<Real> buf;
  kern::Data<Real, LC> d;

  Solve(const Sample& s, double tol, int iterations) : chain(s.th.nv) {
    m.nv = s.th.nv;
    m.nefc_max = std::max(1, s.th.nefc);
    chain.bind(m);
    m.opt_iterations = iterations;
    m.opt_tolerance = Real(tol);
    m.stat_meaninertia = Real(s.rows.meaninertia);
    o = kern::DataLayout::make(m);
    buf.assign(static_cast<std::size_t>(o.size), Real(0));
    d = kern::Data<Real, LC>::bind(kern::View<Real, LC>{buf.data(), {}}, o);
  }
  Solve(const Solve&) = delete;
  Solve& operator=(const Solve&) = delete;

  // set(x, dx) gives the input value x (+ the direction dx in whatever way Real takes it)
  template <class Set>
  void load(const Sample& s, const Theta* dir, Set&& set) {
    const Theta& t = s.th;
    const int nv = t.nv, ne = t.nefc;
    auto put = [&](kern::View<Real, LC> v, const std::vector<double>& x, const std::vector<double>* dx) {
      for (std::size_t i = 0; i < x.size(); ++i) v[static_cast<int>(i)] = set(x[i], dx ? (*dx)[i] : 0.0);
    };
    put(d.qM(), t.M, dir ? &dir->M : nullptr);
    put(d.qfrc_smooth(), t.b, dir ? &dir->b : nullptr);
    put(d.efc_J(), t.J, dir ? &dir->J : nullptr);
    put(d.efc_aref(), t.aref, dir ? &dir->aref : nullptr);
    put(d.efc_D(), t.D, dir ? &dir->D : nullptr);
    put(d.efc_R(), t.R, dir ? &dir->R : nullptr);
    d.nefc()[0] = Real(ne);
    for (int i = 0; i < ne; ++i) {
      d.efc_type()[i] = Real(s.rows.type[i]);
      d.efc_frictionloss()[i] = Real(s.rows.floss[i]);
      d.efc_mu()[i] = Real(s.rows.mu[i]);
      d.efc_dim()[i] = Real(s.rows.dim[i]);
    }
    // a_s = M⁻¹ qfrc_smooth in Real (the solver's own Cholesky), so that its tangent is consistent
    std::vector<Real> L(static_cast<std::size_t>(nv) * nv);
    const kern::View<Real, LC> Lv{L.data(), {}};
    for (int i = 0; i < nv * nv; ++i) Lv[i] = d.qM()[i];
    kern::dense_cholesky(nv, Lv);
    for (int i = 0; i < nv; ++i) d.qacc_smooth()[i] = d.qfrc_smooth()[i];
    kern::dense_cholesky_solve(nv, Lv, d.qacc_smooth());
  }
};

// A random direction, dense on every field and scaled entry by entry so that a step e is a
// relative change: M symmetric with dM_rc ~ sqrt(M_rr M_cc) (stays positive definite), J by the
// largest entry of its row, qfrc_smooth by its largest entry, aref, D and R by each entry.
Theta random_direction(const Theta& t, sgadj::Rng& rng) {
  const int nv = t.nv;
  Theta u = t;
  for (int r = 0; r < nv; ++r)
    for (int c = 0; c <= r; ++c)
      u.M[r * nv + c] = u.M[c * nv + r] = 0.3 * rng.normal() * std::sqrt(t.M[r * nv + r] * t.M[c * nv + c]);
  double bmax = 0;
  for (double x : t.b) bmax = std::max(bmax, std::abs(x));
  for (double& x : u.b) x = rng.normal() * bmax;
  for (int i = 0; i < t.nefc; ++i) {
    double jmax = 0;
    for (int c = 0; c < nv; ++c) jmax = std::max(jmax, std::abs(t.J[i * nv + c]));
    for (int c = 0; c < nv; ++c) u.J[i * nv + c] = rng.normal() * jmax;
    u.aref[i] = rng.normal() * std::abs(t.aref[i]);
    u.D[i] = rng.normal() * t.D[i];
    u.R[i] = rng.normal() * t.R[i];
  }
  return u;
}

// The adjoint for weights (wa on qacc, wf on efc_force) dotted with a direction u, as a DotTest
// "in" side: (Jᵀw)·u = Σ θ̄·dθ − λᵀ dM a.
struct AdjointResult {
  std::vector<double> qfrc, J, aref, D, R, lam, qacc;
  int zone_counts[5] = {0, 0, 0, 0, 0};
  double margin = INFINITY;  // distance of the solution to the nearest zone boundary (relative)
};

// How far the solution's rows are from a zone boundary, relative to the rows' scale: one-sided
// rows |jar| / max|jar|; friction loss ||jar| − R floss| / (R floss); elliptic contacts
// min(|N − mu T|, |mu N + T|) / ‖U‖ (facts §5). A finite difference must step well inside it.
double zone_margin(const Sample& s, const std::vector<double>& jar) {
  double scale = 0, m = INFINITY;
  for (double x : jar) scale = std::max(scale, std::abs(x));
  for (int i = 0; i < s.th.nefc;) {
    const int type = s.rows.type[i];
    if (type == kern::kCnstrContactElliptic) {
      const int dim = s.rows.dim[i];
      const double mu = s.rows.mu[i], N = mu * jar[i];
      double T2 = 0;
      for (int k = 1; k < dim; ++k) T2 += std::pow(s.rows.mu[i + k] * jar[i + k], 2);
      const double T = std::sqrt(T2), U = std::sqrt(N * N + T2);
      m = std::min(m, std::min(std::abs(N - mu * T), std::abs(mu * N + T)) / std::max(U, 1e-300));
      i += dim;
      continue;
    }
    if (type == kern::kCnstrFrictionDof || type == kern::kCnstrFrictionTendon) {
      const double rf = s.th.R[i] * s.rows.floss[i];
      m = std::min(m, std::abs(std::abs(jar[i]) - rf) / rf);
    } else if (type != kern::kCnstrEquality) {
      m = std::min(m, std::abs(jar[i]) / std::max(scale, 1e-300));
    }
    ++i;
  }
  return m;
}

AdjointResult run_adjoint(const Sample& s, const std::vector<double>& wa, const std::vector<double>& wf) {
  Solve<double> p(s, 1e-14, 200);
  p.load(s, nullptr, [](double x, double) { return x; });
  kern::constraint_solve(p.m, p.d);
  std::vector<double> abuf(static_cast<std::size_t>(p.o.size), 0.0);
  const auto a = kern::Data<double, LC>::bind(kern::View<double, LC>{abuf.data(), {}}, p.o);
  const int nv = s.th.nv, ne = s.th.nefc;
  for (int i = 0; i < nv; ++i) a.qacc()[i] = wa[i];
  for (int i = 0; i < ne; ++i) a.efc_force()[i] = wf[i];
  kern::adj_constraint_solve(p.m, p.d, a);
  AdjointResult r;
  auto get = [](kern::View<double, LC> v, int n) {
    std::vector<double> x(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) x[i] = v[i];
    return x;
  };
  r.qfrc = get(a.qfrc_smooth(), nv);
  r.lam = get(a.qacc_smooth(), nv);
  r.J = get(a.efc_J(), ne * nv);
  r.aref = get(a.efc_aref(), ne);
  r.D = get(a.efc_D(), ne);
  r.R = get(a.efc_R(), ne);
  r.qacc = get(p.d.qacc(), nv);
  std::vector<double> jar(static_cast<std::size_t>(ne));
  for (int i = 0; i < ne; ++i) {
    ++r.zone_counts[static_cast<int>(p.d.efc_state()[i])];
    jar[i] = -s.th.aref[i];
    for (int c = 0; c < nv; ++c) jar[i] += s.th.J[i * nv + c] * r.qacc[c];
  }
  r.margin = zone_margin(s, jar);
  return r;
}

void adjoint_side(const AdjointResult& r, const Theta& u, sgadj::DotTest& t) {
  auto in = [&](const std::vector<double>& bar, const std::vector<double>& dir) {
    for (std::size_t i = 0; i < bar.size(); ++i) t.in(bar[i], dir[i]);
  };
  in(r.qfrc, u.b);
  in(r.J, u.J);
  in(r.aref, u.aref);
  in(r.D, u.D);
  in(r.R, u.R);
  const int nv = u.nv;
  for (int i = 0; i < nv; ++i)
    for (int c = 0; c < nv; ++c) t.in(-r.lam[i] * r.qacc[c], u.M[i * nv + c]);  // caller's M part
}

// w·(J u) from the Dual solve, for each weight pair.
struct Tangent {
  std::vector<double> qacc, force;
};

// The Dual solve's tangent, then refined: when the solver's last Newton step changed the active
// set, that step used the Hessian of the previous set and the iterates' tangent has not
// converged (measured: 1e-3 relative on pyramidal piles and G1) although the value has. At the
// returned a, ġ = (∂g/∂a)ȧ + ∂g/∂θ is the Dual derivative of the forward code's g
// (newton_update), and ȧ ← ȧ − H⁻¹ġ is iterated until ġ vanishes: its fixed point is the
// implicit tangent whatever H is (H only preconditions), so H is not taken on trust from the
// code under test. `first_correction`, `last_correction`: sizes relative to ȧ.
Tangent dual_tangent(const Sample& s, const Theta& u, double* first_correction, double* last_correction,
                     int* corrections) {
  Solve<Dd> p(s, 1e-14, 200);
  p.load(s, &u, [](double x, double dx) { Dd v(x); v.d[0] = dx; return v; });
  kern::constraint_solve(p.m, p.d);
  const int nv = s.th.nv;
  std::vector<double> chol(static_cast<std::size_t>(nv) * nv), x(static_cast<std::size_t>(nv));
  *first_correction = 0;
  *corrections = 0;
  for (int it = 0; it < 8; ++it) {
    const auto w = kern::newton_hessian_at_solution(p.m, p.d);
    for (int i = 0; i < nv * nv; ++i) chol[i] = w.chol[i].v;
    for (int i = 0; i < nv; ++i) x[i] = w.grad[i].d[0];
    kern::dense_cholesky_solve(nv, kern::View<double, LC>{chol.data(), {}}, kern::View<double, LC>{x.data(), {}});
    double dx = 0, ad = 0;
    for (int i = 0; i < nv; ++i) {
      dx = std::max(dx, std::abs(x[i]));
      ad = std::max(ad, std::abs(p.d.qacc()[i].d[0]));
    }
    *last_correction = dx / std::max(ad, 1e-300);
    if (it == 0) *first_correction = *last_correction;
    if (*last_correction <= 1e-15) break;  // efc_force's tangent is that of the current ȧ
    for (int i = 0; i < nv; ++i) p.d.qacc()[i].d[0] -= x[i];
    ++*corrections;
  }
  Tangent t;
  for (int i = 0; i < nv; ++i) t.qacc.push_back(p.d.qacc()[i].d[0]);
  for (int i = 0; i < s.th.nefc; ++i) t.force.push_back(p.d.efc_force()[i].d[0]);
  return t;
}

// The scalar w_a·qacc + w_f·efc_force of the double solve at θ + e u.
double loss_at(const Sample& s, const Theta& u, double e, const std::vector<double>& wa,
               const std::vector<double>& wf) {
  Solve<double> p(s, 1e-14, 200);
  p.load(s, &u, [e](double x, double dx) { return x + e * dx; });
  kern::constraint_solve(p.m, p.d);
  double l = 0;
  for (int i = 0; i < s.th.nv; ++i) l += wa[i] * p.d.qacc()[i];
  for (int i = 0; i < s.th.nefc; ++i) l += wf[i] * p.d.efc_force()[i];
  return l;
}

struct Report {
  int states = 0, rows = 0;
  int zones[5] = {0, 0, 0, 0, 0};
  double dot_qacc = 0, dot_force = 0, fd = 0, fd_own_error = 0;
  double tangent_first_correction = 0, margin = INFINITY;
  int corrections = 0;
};

// Dot-product test (weights on qacc only, on efc_force only) and `n_fd` central differences.
void check_sample(const Sample& s, sgadj::Rng& rng, int n_fd, Report& rep) {
  const int nv = s.th.nv, ne = s.th.nefc;
  const Theta u = random_direction(s.th, rng);
  double first_corr = 0, last_corr = 0;
  int ncorr = 0;
  const Tangent tan = dual_tangent(s, u, &first_corr, &last_corr, &ncorr);
  EXPECT_LE(last_corr, 1e-12) << "tangent refinement did not settle";
  rep.tangent_first_correction = std::max(rep.tangent_first_correction, first_corr);
  rep.corrections = std::max(rep.corrections, ncorr);
  const std::vector<double> zero_v(static_cast<std::size_t>(nv), 0.0), zero_f(static_cast<std::size_t>(ne), 0.0);
  const std::vector<double> wa = rng.normals(nv), wf = rng.normals(ne);
  for (int which = 0; which < 2; ++which) {
    const std::vector<double>& ua = which == 0 ? wa : zero_v;
    const std::vector<double>& uf = which == 0 ? zero_f : wf;
    sgadj::DotTest t;
    for (int i = 0; i < nv; ++i) t.out(ua[i], tan.qacc[i]);
    for (int i = 0; i < ne; ++i) t.out(uf[i], tan.force[i]);
    const AdjointResult r = run_adjoint(s, ua, uf);
    adjoint_side(r, u, t);
    EXPECT_LE(t.rel(), kDotRel) << (which == 0 ? "qacc: " : "efc_force: ") << t.str();
    double& worst = which == 0 ? rep.dot_qacc : rep.dot_force;
    worst = std::max(worst, std::isnan(t.rel()) ? INFINITY : t.rel());
    if (which == 0) {
      for (int z = 0; z < 5; ++z) rep.zones[z] += r.zone_counts[z];
      rep.margin = std::min(rep.margin, r.margin);
    }
  }
  // finite differences on both outputs at once
  for (int k = 0; k < n_fd; ++k) {
    const Theta v = random_direction(s.th, rng);
    const std::vector<double> fa = rng.normals(nv), ff = rng.normals(ne);
    const AdjointResult r = run_adjoint(s, fa, ff);
    sgadj::DotTest t;
    adjoint_side(r, v, t);
    // relative steps 1e-6 and 1e-7 (a row within ~4h of a zone boundary makes one of them jump:
    // the one with the smaller own error estimate is taken)
    const auto f6 = sgadj::central_difference([&](double e) { return loss_at(s, v, e, fa, ff); }, 1e-6);
    const auto f7 = sgadj::central_difference([&](double e) { return loss_at(s, v, e, fa, ff); }, 1e-7);
    const auto& fd = f6.error <= f7.error ? f6 : f7;
    const double err = std::abs(t.rhs - fd.value) / std::max(std::abs(fd.value), 1e-300);
    EXPECT_LE(err, kFdRel) << "adjoint " << t.rhs << " fd " << fd.value << " (fd's own error " << fd.error << ")";
    rep.fd = std::max(rep.fd, err);
    rep.fd_own_error = std::max(rep.fd_own_error, fd.error / std::max(std::abs(fd.value), 1e-300));
  }
  ++rep.states;
  rep.rows += ne;
}

// MuJoCo cold and converged, dense Jacobian (efc_J is nefc x nv).
void converged_options(mjModel* mm) {
  mm->opt.disableflags |= mjDSBL_WARMSTART;
  mm->opt.tolerance = 1e-14;
  mm->opt.iterations = 200;
  mm->opt.jacobian = mjJAC_DENSE;
}

// Steps MuJoCo and checks `n_states` states with rows from step `first` on, every `every`
// steps; with want_cone, a state is taken only when some elliptic contact is in the middle zone.
void run_model(const std::string& name, mjModel* mm, mjData* md, int first, int every, int n_states, bool want_cone) {
  converged_options(mm);
  sgadj::Rng rng(0x5017ad1u + static_cast<unsigned>(name.size()));
  Report rep;
  for (int s = 1; s <= first + 200 * every && rep.states < n_states; ++s) {
    mj_step(mm, md);
    if (s < first || (s - first) % every) continue;
    mj_forward(mm, md);
    if (md->nefc == 0) continue;
    if (want_cone && std::none_of(md->efc_state, md->efc_state + md->nefc, [](int st) { return st == mjCNSTRSTATE_CONE; }))
      continue;
    check_sample(sample_of(mm, md), rng, 2, rep);
  }
  std::printf("[solver-adjoint] %-26s states %d rows/state %5.1f zones (sat %d quad %d lin %d cone %d)  "
              "dot qacc %.1e  dot efc_force %.1e  fd %.1e (fd's own error %.1e)  zone margin %.1e  "
              "Dual tangent: first correction %.1e, corrections %d\n",
              name.c_str(), rep.states, rep.states ? double(rep.rows) / rep.states : 0.0, rep.zones[0], rep.zones[1],
              rep.zones[2] + rep.zones[3], rep.zones[4], rep.dot_qacc, rep.dot_force, rep.fd, rep.fd_own_error, rep.margin,
              rep.tangent_first_correction, rep.corrections);
  ASSERT_EQ(rep.states, n_states) << name << ": too few states with constraint rows";
  if (want_cone) EXPECT_GT(rep.zones[4], 0) << name;
}

sgtest::MjModelPtr load(const std::string& path) {
  std::string err;
  auto mm = sgtest::mujoco_load(path, &err);
  EXPECT_TRUE(mm) << path << ": " << err;
  return mm;
}

void run_xml(const std::string& name, const std::string& xml, int first, int every, int n, bool want_cone) {
  const std::string path = testing::TempDir() + "/solver_adjoint_" + name + ".xml";
  std::ofstream(path) << xml;
  auto mm = load(path);
  ASSERT_TRUE(mm);
  sgtest::MjDataPtr md(mj_makeData(mm.get()));
  run_model(name, mm.get(), md.get(), first, every, n, want_cone);
}

// Primitives dropped in a heap on a plane (condim 1 on the plane, so a contact takes the other
// geom's condim 3, 4 or 6; geom-geom pairs the larger).
std::string heap_xml(const char* cone, double impratio) {
  char opt[160];
  std::snprintf(opt, sizeof opt, R"(<option timestep="0.002" cone="%s" impratio="%g"/>)", cone, impratio);
  return std::string("<mujoco>") + opt + R"(
  <worldbody>
    <geom type="plane" size="4 4 0.1" condim="1"/>
    <body pos="0 0 0.1"><freejoint/><geom type="box" size="0.25 0.2 0.06" condim="4"/></body>
    <body pos="0.1 -0.05 0.35" euler="30 0 15"><freejoint/><geom type="box" size="0.08 0.12 0.05" condim="3"/></body>
    <body pos="-0.08 0.1 0.55" euler="0 70 10"><freejoint/><geom type="capsule" size="0.05 0.18" condim="6"/></body>
    <body pos="0.4 0.2 0.2"><freejoint/><geom type="sphere" size="0.09" condim="4"/></body>
    <body pos="-0.4 -0.2 0.25" euler="20 30 40"><freejoint/><geom type="cylinder" size="0.08 0.06" condim="6"/></body>
    <body pos="0.05 0.0 0.85" euler="10 0 0"><freejoint/><geom type="ellipsoid" size="0.1 0.07 0.05" condim="3"/></body>
  </worldbody>
</mujoco>)";
}

// A limited hinge/ball/slide arm with friction loss on every dof and a limited fixed tendon
// with friction loss, swinging down until its tip box rests on a floor.
constexpr const char* kArmXml = R"(<mujoco>
  <option timestep="0.002"/>
  <default><joint limited="true" frictionloss="0.15" damping="0.02"/></default>
  <worldbody>
    <geom type="plane" size="4 4 0.1" pos="0 0 0.75"/>
    <body pos="0 0 1.3"><joint name="a" type="hinge" axis="1 0 0" range="-50 50"/>
      <geom type="capsule" fromto="0 0 0 0 0.25 0" size="0.03"/>
    <body pos="0 0.25 0"><joint name="b" type="ball" range="0 35"/>
      <geom type="capsule" fromto="0 0 0 0 0.25 0" size="0.03"/>
    <body pos="0 0.25 0"><joint name="c" type="hinge" axis="1 0 0" range="-10 60" frictionloss="0.4"/>
      <geom type="capsule" fromto="0 0 0 0 0.2 0" size="0.03"/>
    <body pos="0 0.2 0"><joint name="e" type="slide" axis="0 1 0" range="-0.04 0.04" frictionloss="0.8"/>
      <geom type="box" size="0.05 0.05 0.05" condim="3"/>
  </body></body></body></body></worldbody>
  <tendon><fixed limited="true" range="-0.4 0.4" frictionloss="0.25">
    <joint joint="a" coef="1"/><joint joint="c" coef="1"/>
  </fixed></tendon>
</mujoco>)";

TEST(SolverAdjoint, HeapPyramidal) { run_xml("heap_pyramidal", heap_xml("pyramidal", 1), 150, 25, 3, false); }
TEST(SolverAdjoint, HeapPyramidalImpratio3) { run_xml("heap_pyramidal_ir3", heap_xml("pyramidal", 3), 150, 25, 3, false); }
TEST(SolverAdjoint, HeapEllipticImpratio3) { run_xml("heap_elliptic_ir3", heap_xml("elliptic", 3), 150, 5, 3, true); }
TEST(SolverAdjoint, HeapElliptic) { run_xml("heap_elliptic", heap_xml("elliptic", 1), 150, 5, 3, true); }
TEST(SolverAdjoint, LimitedArmFrictionloss) { run_xml("arm_frictionloss", kArmXml, 100, 40, 3, false); }

TEST(SolverAdjoint, HumanoidFloor) {
  auto mm = load(sgtest::humanoid_xml());
  ASSERT_TRUE(mm);
  sgtest::MjDataPtr md(mj_makeData(mm.get()));
  run_model("humanoid_pyramidal", mm.get(), md.get(), 200, 100, 3, false);
}

TEST(SolverAdjoint, HumanoidFloorElliptic) {
  auto mm = load(sgtest::humanoid_xml());
  ASSERT_TRUE(mm);
  mm->opt.cone = mjCONE_ELLIPTIC;
  mm->opt.impratio = 3;
  sgtest::MjDataPtr md(mj_makeData(mm.get()));
  run_model("humanoid_elliptic_ir3", mm.get(), md.get(), 200, 20, 3, true);
}

TEST(SolverAdjoint, G1Home) {
  auto mm = load(sgtest::data_dir() + "/models/unitree_g1/g1_mjx_mujoco222.xml");
  ASSERT_TRUE(mm);
  sgtest::MjDataPtr md(mj_makeData(mm.get()));
  const int key = mj_name2id(mm.get(), mjOBJ_KEY, "home");
  ASSERT_GE(key, 0);
  mj_resetDataKeyframe(mm.get(), md.get(), key);
  run_model("g1_home", mm.get(), md.get(), 50, 100, 3, false);
}

// A state exactly on a zone boundary (measure zero): the adjoint differentiates the zone the
// forward reports. One dof, M = 2, one joint-limit row J = 1, aref = 0, D = 5, qfrc_smooth = 0:
// a_s = 0 puts jar exactly at 0, which scalar_row_value calls satisfied (its quadratic branch is
// jar < 0), so da/dqfrc_smooth = 1/M = 0.5 (the right derivative; the left one is 1/(M + D)).
TEST(SolverAdjoint, ZoneBoundaryUsesReportedZone) {
  Sample s;
  s.th.nv = 1;
  s.th.nefc = 1;
  s.th.M = {2.0};
  s.th.b = {0.0};
  s.th.J = {1.0};
  s.th.aref = {0.0};
  s.th.D = {5.0};
  s.th.R = {0.2};
  s.rows.type = {kern::kCnstrLimitJoint};
  s.rows.dim = {0};
  s.rows.floss = {0.0};
  s.rows.mu = {0.0};
  const AdjointResult r = run_adjoint(s, {1.0}, {0.0});
  EXPECT_EQ(r.zone_counts[kern::kStateSatisfied], 1);
  EXPECT_DOUBLE_EQ(r.qfrc[0], 0.5);
  EXPECT_DOUBLE_EQ(r.lam[0], 0.5);
  EXPECT_EQ(r.aref[0], 0.0);
  EXPECT_EQ(r.D[0], 0.0);
  // on the quadratic side (qfrc_smooth = b < 0) a = (b + D aref)/(M + D): da/db = 1/7,
  // da/daref = D/(M + D) = 5/7, da/dD = (aref − a)/(M + D) = −b/(M + D)² = 1/49
  s.th.b = {-1.0};
  const AdjointResult q = run_adjoint(s, {1.0}, {0.0});
  EXPECT_EQ(q.zone_counts[kern::kStateQuadratic], 1);
  EXPECT_NEAR(q.qfrc[0], 1.0 / 7.0, 1e-15);
  EXPECT_NEAR(q.aref[0], 5.0 / 7.0, 1e-15);
  EXPECT_NEAR(q.D[0], 1.0 / 49.0, 1e-15);
}

}  // namespace
