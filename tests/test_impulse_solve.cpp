// The Impulse contact model's impulse solve (kernels/impulse/impulse_solve.hpp, issue 9 part 1) and its
// reverse mode (impulse_solve_adjoint.hpp), on problems with the structure of G = J M⁻¹ Jᵀ:
//  - one sticking contact: the sweeps converge to −G⁻¹c (zero contact velocity);
//  - every output satisfies the cone: P_n >= 0, ‖P_t‖ <= μ P_n;
//  - soft mode with every contact deep (σ = 1 to double precision) equals the hard mode bit for bit;
//  - the adjoint against the dual-number forward mode (dot-product test) and central finite
//    differences, in hard and soft mode, with contacts separating, sticking and sliding;
//  - with 1-D blocks (limits, friction loss: rows 1 and 2 empty, as impulse_rows makes them), the
//    solve that skips their structural zeros (`dim`) equals the one that does not, bit for bit,
//    forward and reverse, and its adjoint passes the same dot-product and difference tests.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/base/dual.hpp"
#include "kernels/impulse/impulse_solve_adjoint.hpp"

namespace {

using namespace stiffgrad;
using LC = kern::Contiguous;
using D = kern::Dual<double, 1>;
template <class Real>
kern::View<Real, LC> V(std::vector<Real>& x) {
  return kern::View<Real, LC>{x.data(), LC{}};
}

// x + dx ε as dual numbers (forward mode along dx), and x + e dx (a finite-difference point).
std::vector<D> dual(const std::vector<double>& x, const std::vector<double>& dx) {
  std::vector<D> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    r[i] = D(x[i]);
    r[i].d[0] = dx[i];
  }
  return r;
}
std::vector<double> shifted(std::vector<double> x, const std::vector<double>& dx, double e) {
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += e * dx[i];
  return x;
}
double weighted_sum(const std::vector<double>& w, const std::vector<double>& x) {
  double s = 0;
  for (std::size_t i = 0; i < w.size(); ++i) s += w[i] * x[i];
  return s;
}

struct Problem {
  int K;
  std::vector<double> G, c, mu, depth;
  double kappa = 300;
  bool soft = false;
  int sweeps = 10;
};

// G = A Aᵀ + 0.05 I (A: 3K x 6, a six-dof body touching at K points), c with normals
// approaching (negative) or separating, mixed tangential velocities.
Problem random_problem(int K, unsigned seed, bool soft) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01;
  Problem p{K, {}, {}, {}, {}};
  p.soft = soft;
  const int n = 3 * K;
  std::vector<double> A(static_cast<std::size_t>(n * 6));
  for (double& x : A) x = n01(rng);
  p.G.assign(static_cast<std::size_t>(n * n), 0.0);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) {
      double s = r == c ? 0.05 : 0.0;
      for (int k = 0; k < 6; ++k) s += A[static_cast<std::size_t>(r * 6 + k)] * A[static_cast<std::size_t>(c * 6 + k)];
      p.G[static_cast<std::size_t>(r * n + c)] = s;
    }
  for (int i = 0; i < K; ++i) {
    p.c.push_back(i % 3 == 2 ? 0.3 : -1.0 - std::abs(n01(rng)));
    p.c.push_back(n01(rng));
    p.c.push_back(n01(rng));
    p.mu.push_back(0.3 + 0.4 * std::abs(n01(rng)) / 3);
    p.depth.push_back(0.004 * n01(rng));
  }
  return p;
}

template <class Real>
std::vector<Real> solve(int K, std::vector<Real> G, std::vector<Real> c, std::vector<Real> mu,
                        const std::vector<Real>& depth, double kappa, bool soft, int sweeps) {
  std::vector<Real> sigma(static_cast<std::size_t>(K)), step(sigma.size()), P(static_cast<std::size_t>(3 * K)), out(P.size());
  for (int i = 0; i < K; ++i) sigma[static_cast<std::size_t>(i)] = kern::impulse_activation(depth[static_cast<std::size_t>(i)], Real(kappa));
  kern::impulse_solve(kern::SerialTeam{1}, K, V(G), V(c), V(mu), V(sigma), soft, kern::View<Real, LC>{}, sweeps, V(step), V(P), V(out),
                      kern::View<Real, LC>{});
  return out;
}

TEST(ImpulseSolve, StickingContactAndConeAndSoftLimit) {
  // one contact inside its cone: −G⁻¹c is the answer. The start −(G + ε tr G I)⁻¹c leaves the
  // contact velocity G P + c at ε tr G |P| (ε = kImpulseStartReg); each sweep P ← P − r(GP + c)
  // contracts it (r <= 1 / tr G), so after 10 sweeps it is below that bound and after 200 sweeps
  // it vanishes to rounding.
  Problem one{1, {2.0, 0.1, 0.0, 0.1, 1.5, 0.2, 0.0, 0.2, 1.8}, {-1.0, 0.1, -0.05}, {0.8}, {0.01}};
  for (const int sweeps : {10, 200}) {
    const auto P = solve(1, one.G, one.c, one.mu, one.depth, 300, false, sweeps);
    const double trG = one.G[0] + one.G[4] + one.G[8], normP = std::sqrt(P[0] * P[0] + P[1] * P[1] + P[2] * P[2]);
    const double bound = sweeps == 10 ? kern::kImpulseStartReg * trG * normP : 1e-14;
    for (int a = 0; a < 3; ++a) {
      double v = one.c[static_cast<std::size_t>(a)];
      for (int b = 0; b < 3; ++b) v += one.G[static_cast<std::size_t>(3 * a + b)] * P[static_cast<std::size_t>(b)];
      EXPECT_NEAR(v, 0.0, bound) << sweeps << " sweeps";
    }
  }
  // cone on every output; soft with deep contacts equals hard bit for bit
  int sliding = 0, separated = 0;
  for (unsigned seed = 0; seed < 20; ++seed) {
    Problem p = random_problem(4, seed, false);
    const auto out = solve(4, p.G, p.c, p.mu, p.depth, p.kappa, false, p.sweeps);
    for (int i = 0; i < 4; ++i) {
      const double pn = out[static_cast<std::size_t>(3 * i)], t = std::hypot(out[static_cast<std::size_t>(3 * i + 1)], out[static_cast<std::size_t>(3 * i + 2)]);
      EXPECT_GE(pn, 0.0);
      EXPECT_LE(t, p.mu[static_cast<std::size_t>(i)] * pn * (1 + 1e-14));
      separated += pn == 0.0;
      sliding += pn > 0 && t >= p.mu[static_cast<std::size_t>(i)] * pn * (1 - 1e-12);
    }
    std::vector<double> deep(4, 1.0);
    EXPECT_TRUE(solve(4, p.G, p.c, p.mu, deep, p.kappa, true, p.sweeps) == solve(4, p.G, p.c, p.mu, deep, p.kappa, false, p.sweeps));
  }
  std::printf("[impulse] 20 random 4-contact problems: %d contacts separated, %d sliding on the cone\n", separated, sliding);
  EXPECT_GT(separated, 0);
  EXPECT_GT(sliding, 0);
}

// <w, J u> (dual-number forward mode, and central differences) against <Jᵀ w, u> (reverse).
TEST(ImpulseSolve, AdjointMatchesForwardModeAndFiniteDifferences) {
  double worst_dot = 0, worst_fd = 0;
  for (bool soft : {false, true})
    for (unsigned seed = 100; seed < 110; ++seed) {
      const int K = 3, n = 9;
      Problem p = random_problem(K, seed, soft);
      std::mt19937_64 rng(seed + 7);
      std::normal_distribution<double> n01;
      std::vector<double> uG(p.G.size()), uc(p.c.size()), umu(p.mu.size()), ud(p.depth.size()), w(static_cast<std::size_t>(n));
      for (auto* x : {&uG, &uc, &umu, &w})
        for (double& e : *x) e = n01(rng);
      for (double& e : ud) e = 0.001 * n01(rng);
      // reverse
      std::vector<double> sigma(K), step(K), P(n), out(n), record(static_cast<std::size_t>(p.sweeps * n));
      for (int i = 0; i < K; ++i) sigma[static_cast<std::size_t>(i)] = kern::impulse_activation(p.depth[static_cast<std::size_t>(i)], p.kappa);
      const kern::View<double, LC> all_3d{};
      kern::impulse_solve(kern::SerialTeam{1}, K, V(p.G), V(p.c), V(p.mu), V(sigma), soft, all_3d, p.sweeps, V(step), V(P), V(out), V(record));
      std::vector<double> Gb(p.G.size()), cb(p.c.size()), mub(p.mu.size()), sb(K), Pb(n), source(K);
      kern::adj_impulse_solve(kern::SerialTeam{1}, K, V(p.G), V(p.c), V(p.mu), V(sigma), soft, all_3d, p.sweeps, V(P), V(record), V(w), V(Gb),
                              V(cb), V(mub), V(sb), V(Pb), V(step), V(source));
      double rev = 0;
      for (std::size_t i = 0; i < Gb.size(); ++i) rev += Gb[i] * uG[i];
      for (std::size_t i = 0; i < cb.size(); ++i) rev += cb[i] * uc[i];
      for (std::size_t i = 0; i < mub.size(); ++i) rev += mub[i] * umu[i];
      for (int i = 0; i < K; ++i)
        rev += kern::adj_impulse_activation(p.depth[static_cast<std::size_t>(i)], p.kappa, sb[static_cast<std::size_t>(i)]) * ud[static_cast<std::size_t>(i)];
      // forward mode
      const auto outD = solve<D>(K, dual(p.G, uG), dual(p.c, uc), dual(p.mu, umu), dual(p.depth, ud), p.kappa, soft, p.sweeps);
      double fwd = 0;
      for (int i = 0; i < n; ++i) fwd += w[static_cast<std::size_t>(i)] * outD[static_cast<std::size_t>(i)].d[0];  // <w, J u>
      // central differences
      auto loss = [&](double e) {
        auto shift = [e](const std::vector<double>& x, const std::vector<double>& dx) { return shifted(x, dx, e); };
        const auto o = solve(K, shift(p.G, uG), shift(p.c, uc), shift(p.mu, umu), shift(p.depth, ud), p.kappa, soft, p.sweeps);
        return weighted_sum(w, o);
      };
      const double h = 1e-7, fd = (loss(h) - loss(-h)) / (2 * h);
      const double scale = std::max(1.0, std::abs(fwd));
      const double dot = std::abs(rev - fwd) / scale, efd = std::abs(rev - fd) / scale;
      worst_dot = std::max(worst_dot, dot);
      worst_fd = std::max(worst_fd, efd);
      EXPECT_LT(dot, 1e-12) << (soft ? "soft" : "hard") << " seed " << seed;
      EXPECT_LT(efd, 1e-5) << (soft ? "soft" : "hard") << " seed " << seed << ": rev " << rev << " fd " << fd;
    }
  std::printf("[impulse] 3 contacts, 10 sweeps, 20 problems (hard and soft): dot-product rel residual %.1e, "
              "central FD %.1e\n", worst_dot, worst_fd);
}


// A problem with the structure kernels/impulse/impulse_rows.hpp gives: blocks 0 and 3 a dof's friction
// loss (mu = −h f: a box), block 1 a joint limit (mu = 0), blocks 2 and 4 contacts. A 1-D block's
// rows 1 and 2 are empty: zero in J, so zero in G = J M⁻¹ Jᵀ and c, with a unit pad on G's
// diagonal. live[r]: whether row r is non-empty.
struct MixedProblem {
  Problem p;
  std::vector<double> dim;
  std::vector<bool> live;
};
// Blocks `dim` (1 or 3 each) on a random problem: the 1-D blocks' empty rows zeroed, with the pad.
MixedProblem with_blocks(Problem p, std::vector<double> dim) {
  const int K = p.K, n = 3 * K;
  MixedProblem q{std::move(p), std::move(dim), std::vector<bool>(n, true)};
  for (int b = 0; b < K; ++b)
    if (q.dim[static_cast<std::size_t>(b)] == 1)
      for (int t = 1; t < 3; ++t) q.live[static_cast<std::size_t>(3 * b + t)] = false;
  for (int r = 0; r < n; ++r)
    for (int s = 0; s < n; ++s)
      if (!q.live[static_cast<std::size_t>(r)] || !q.live[static_cast<std::size_t>(s)])
        q.p.G[static_cast<std::size_t>(r * n + s)] = r == s ? 1.0 : 0.0;
  for (int r = 0; r < n; ++r)
    if (!q.live[static_cast<std::size_t>(r)]) q.p.c[static_cast<std::size_t>(r)] = 0.0;
  return q;
}

MixedProblem mixed_problem(unsigned seed, bool soft) {
  MixedProblem q = with_blocks(random_problem(5, seed, soft), {1, 1, 3, 1, 3});
  q.p.mu[0] = -0.004;
  q.p.mu[1] = 0.0;
  q.p.mu[3] = -0.0005;  // tight: this box saturates
  q.p.c[3] = -2.0;      // the limit is pushed into
  return q;
}

template <class Real>
struct MixedSolve {
  std::vector<Real> out, P, record;
};
template <class Real>
MixedSolve<Real> solve_mixed(std::vector<Real> G, std::vector<Real> c, std::vector<Real> mu, const std::vector<Real>& depth,
                             double kappa, bool soft, int sweeps, std::vector<Real> dim, int width = 1) {
  const int K = static_cast<int>(mu.size());
  MixedSolve<Real> r{std::vector<Real>(static_cast<std::size_t>(3 * K)), std::vector<Real>(static_cast<std::size_t>(3 * K)),
                     std::vector<Real>(static_cast<std::size_t>(3 * K * sweeps))};
  std::vector<Real> sigma(static_cast<std::size_t>(K)), step(sigma.size());
  for (int i = 0; i < K; ++i) sigma[static_cast<std::size_t>(i)] = kern::impulse_activation(depth[static_cast<std::size_t>(i)], Real(kappa));
  kern::impulse_solve(kern::SerialTeam{width}, K, V(G), V(c), V(mu), V(sigma), soft, dim.empty() ? kern::View<Real, LC>{} : V(dim), sweeps,
                      V(step), V(r.P), V(r.out), V(r.record));
  return r;
}

struct MixedAdjoint {
  std::vector<double> Gb, cb, mub, sb;
};
MixedAdjoint adjoint_mixed(MixedProblem& q, const std::vector<double>& w, bool use_dim, int width = 1) {
  Problem& p = q.p;
  const int K = p.K, n = 3 * K;
  std::vector<double> dim = use_dim ? q.dim : std::vector<double>{};
  MixedSolve<double> f = solve_mixed(p.G, p.c, p.mu, p.depth, p.kappa, p.soft, p.sweeps, dim, width);
  std::vector<double> sigma(static_cast<std::size_t>(K)), step(sigma.size()), source(sigma.size()), Pb(static_cast<std::size_t>(n));
  for (int i = 0; i < K; ++i) sigma[static_cast<std::size_t>(i)] = kern::impulse_activation(p.depth[static_cast<std::size_t>(i)], p.kappa);
  MixedAdjoint a{std::vector<double>(p.G.size()), std::vector<double>(p.c.size()), std::vector<double>(p.mu.size()),
                 std::vector<double>(static_cast<std::size_t>(K))};
  std::vector<double> wv = w;
  kern::adj_impulse_solve(kern::SerialTeam{width}, K, V(p.G), V(p.c), V(p.mu), V(sigma), p.soft, use_dim ? V(dim) : kern::View<double, LC>{},
                          p.sweeps, V(f.P), V(f.record), V(wv), V(a.Gb), V(a.cb), V(a.mub), V(a.sb), V(Pb), V(step),
                          V(source));
  return a;
}

TEST(ImpulseSolve, OneDimensionalBlocksSkipTheirZerosExactly) {
  double worst_dot = 0, worst_fd = 0;
  int saturated_boxes = 0, active_limits = 0;
  for (bool soft : {false, true})
    for (unsigned seed = 200; seed < 210; ++seed) {
      MixedProblem q = mixed_problem(seed, soft);
      Problem& p = q.p;
      const int K = p.K, n = 3 * K;
      // forward: the same impulses, iterates and record with and without the widths
      const auto with_dim = solve_mixed(p.G, p.c, p.mu, p.depth, p.kappa, soft, p.sweeps, q.dim);
      const auto without = solve_mixed(p.G, p.c, p.mu, p.depth, p.kappa, soft, p.sweeps, std::vector<double>{});
      EXPECT_TRUE(with_dim.out == without.out) << "seed " << seed;
      EXPECT_TRUE(with_dim.record == without.record) << "seed " << seed;
      for (int b = 0; b < K; ++b)
        if (q.dim[static_cast<std::size_t>(b)] == 1)
          for (int t = 1; t < 3; ++t) EXPECT_EQ(with_dim.out[static_cast<std::size_t>(3 * b + t)], 0.0);
      saturated_boxes += std::abs(with_dim.P[9]) == -p.mu[3];
      active_limits += with_dim.P[3] > 0;
      // reverse: the adjoints of everything live agree bit for bit
      std::mt19937_64 rng(seed + 11);
      std::normal_distribution<double> n01;
      std::vector<double> w(static_cast<std::size_t>(n));
      for (int r = 0; r < n; ++r) w[static_cast<std::size_t>(r)] = q.live[static_cast<std::size_t>(r)] ? n01(rng) : 0.0;
      const MixedAdjoint a = adjoint_mixed(q, w, true), b = adjoint_mixed(q, w, false);
      for (int r = 0; r < n; ++r) {
        if (!q.live[static_cast<std::size_t>(r)]) continue;
        EXPECT_EQ(a.cb[static_cast<std::size_t>(r)], b.cb[static_cast<std::size_t>(r)]) << "c row " << r;
        for (int s = 0; s < n; ++s)
          if (q.live[static_cast<std::size_t>(s)])
            EXPECT_EQ(a.Gb[static_cast<std::size_t>(r * n + s)], b.Gb[static_cast<std::size_t>(r * n + s)]) << "G " << r << "," << s;
      }
      EXPECT_TRUE(a.mub == b.mub);
      EXPECT_TRUE(a.sb == b.sb);
      // the skipping adjoint against forward mode and central differences, along live directions
      std::vector<double> uG(p.G.size(), 0.0), uc(p.c.size(), 0.0), umu(p.mu.size()), ud(p.depth.size());
      for (int r = 0; r < n; ++r) {
        if (!q.live[static_cast<std::size_t>(r)]) continue;
        uc[static_cast<std::size_t>(r)] = n01(rng);
        for (int s = 0; s < n; ++s)
          if (q.live[static_cast<std::size_t>(s)]) uG[static_cast<std::size_t>(r * n + s)] = n01(rng);
      }
      for (double& e : umu) e = 0.1 * n01(rng);
      umu[1] = 0.0;  // a limit's mu = 0 is a marker, not a coefficient
      for (double& e : ud) e = 0.001 * n01(rng);
      double rev = 0;
      for (std::size_t i = 0; i < uG.size(); ++i) rev += a.Gb[i] * uG[i];
      for (std::size_t i = 0; i < uc.size(); ++i) rev += a.cb[i] * uc[i];
      for (std::size_t i = 0; i < umu.size(); ++i) rev += a.mub[i] * umu[i];
      for (int i = 0; i < K; ++i)
        rev += kern::adj_impulse_activation(p.depth[static_cast<std::size_t>(i)], p.kappa, a.sb[static_cast<std::size_t>(i)]) * ud[static_cast<std::size_t>(i)];
      std::vector<D> dimD(q.dim.begin(), q.dim.end());
      const auto outD = solve_mixed<D>(dual(p.G, uG), dual(p.c, uc), dual(p.mu, umu), dual(p.depth, ud), p.kappa, soft, p.sweeps, dimD).out;
      double fwd = 0;
      for (int i = 0; i < n; ++i) fwd += w[static_cast<std::size_t>(i)] * outD[static_cast<std::size_t>(i)].d[0];  // <w, J u>
      auto loss = [&](double e) {
        auto shift = [e](const std::vector<double>& x, const std::vector<double>& dx) { return shifted(x, dx, e); };
        const auto o = solve_mixed(shift(p.G, uG), shift(p.c, uc), shift(p.mu, umu), shift(p.depth, ud), p.kappa, soft, p.sweeps, q.dim).out;
        return weighted_sum(w, o);
      };
      const double h = 1e-7, fd = (loss(h) - loss(-h)) / (2 * h);
      const double scale = std::max(1.0, std::abs(fwd));
      worst_dot = std::max(worst_dot, std::abs(rev - fwd) / scale);
      worst_fd = std::max(worst_fd, std::abs(rev - fd) / scale);
      EXPECT_LT(std::abs(rev - fwd) / scale, 1e-12) << (soft ? "soft" : "hard") << " seed " << seed;
      EXPECT_LT(std::abs(rev - fd) / scale, 1e-5) << (soft ? "soft" : "hard") << " seed " << seed << ": rev " << rev << " fd " << fd;
    }
  std::printf("[impulse] 2 friction boxes, a limit, 2 contacts, 20 problems: skipping equals not skipping bit for bit; "
              "dot-product %.1e, central FD %.1e; %d saturated boxes, %d active limits\n",
              worst_dot, worst_fd, saturated_boxes, active_limits);
  EXPECT_GT(saturated_boxes, 0);
  EXPECT_GT(active_limits, 0);
}

// The solve's residual sums follow the team's width (kernels/base/team.hpp): with K = 40 blocks
// (every third a friction-loss box) each lane of a width-32 team sums one or two blocks, and the
// warp's tree combines them. Width 32 must agree with width 1 to rounding and differ from it
// somewhere (else the width would not reach the sums); its adjoint, replaying width 32, must pass
// the dot-product test against the dual-number forward mode of width 32.
TEST(ImpulseSolve, TeamWidthOrdersOnlyTheResidualSums) {
  const int K = 40, n = 3 * K;
  double worst_gap = 0, worst_dot = 0;
  int differing = 0;
  for (bool soft : {false, true})
    for (unsigned seed = 300; seed < 304; ++seed) {
      std::vector<double> dim(static_cast<std::size_t>(K), 3.0);
      MixedProblem q = with_blocks(random_problem(K, seed, soft), [&] {
        for (int b = 0; b < K; b += 3) dim[static_cast<std::size_t>(b)] = 1.0;
        return dim;
      }());
      Problem& p = q.p;
      for (int b = 0; b < K; b += 3) p.mu[static_cast<std::size_t>(b)] = -0.004;
      const auto serial = solve_mixed(p.G, p.c, p.mu, p.depth, p.kappa, soft, p.sweeps, q.dim, 1);
      const auto warp = solve_mixed(p.G, p.c, p.mu, p.depth, p.kappa, soft, p.sweeps, q.dim, 32);
      double norm = 0, gap = 0;
      for (int r = 0; r < n; ++r) {
        norm = std::max(norm, std::abs(serial.out[static_cast<std::size_t>(r)]));
        gap = std::max(gap, std::abs(serial.out[static_cast<std::size_t>(r)] - warp.out[static_cast<std::size_t>(r)]));
      }
      differing += serial.out != warp.out;
      worst_gap = std::max(worst_gap, gap / norm);
      EXPECT_LT(gap / norm, 1e-10) << (soft ? "soft" : "hard") << " seed " << seed;
      // the width-32 adjoint against the width-32 forward mode
      std::mt19937_64 rng(seed + 13);
      std::normal_distribution<double> n01;
      std::vector<double> w(static_cast<std::size_t>(n), 0.0), uG(p.G.size(), 0.0), uc(p.c.size(), 0.0),
          umu(p.mu.size()), ud(p.depth.size());
      for (int r = 0; r < n; ++r) {
        if (!q.live[static_cast<std::size_t>(r)]) continue;
        w[static_cast<std::size_t>(r)] = n01(rng);
        uc[static_cast<std::size_t>(r)] = n01(rng);
        for (int s2 = 0; s2 < n; ++s2)
          if (q.live[static_cast<std::size_t>(s2)]) uG[static_cast<std::size_t>(r * n + s2)] = 0.01 * n01(rng);
      }
      for (double& e : umu) e = 0.1 * n01(rng);
      for (double& e : ud) e = 0.001 * n01(rng);
      const MixedAdjoint a = adjoint_mixed(q, w, true, 32);
      double rev = 0;
      for (std::size_t i = 0; i < uG.size(); ++i) rev += a.Gb[i] * uG[i];
      for (std::size_t i = 0; i < uc.size(); ++i) rev += a.cb[i] * uc[i];
      for (std::size_t i = 0; i < umu.size(); ++i) rev += a.mub[i] * umu[i];
      for (int i = 0; i < K; ++i)
        rev += kern::adj_impulse_activation(p.depth[static_cast<std::size_t>(i)], p.kappa, a.sb[static_cast<std::size_t>(i)]) *
               ud[static_cast<std::size_t>(i)];
      std::vector<D> dimD(q.dim.begin(), q.dim.end());
      const auto outD =
          solve_mixed<D>(dual(p.G, uG), dual(p.c, uc), dual(p.mu, umu), dual(p.depth, ud), p.kappa, soft, p.sweeps, dimD, 32).out;
      double fwd = 0;
      for (int i = 0; i < n; ++i) fwd += w[static_cast<std::size_t>(i)] * outD[static_cast<std::size_t>(i)].d[0];
      const double dot = std::abs(rev - fwd) / std::max(1.0, std::abs(fwd));
      worst_dot = std::max(worst_dot, dot);
      EXPECT_LT(dot, 1e-12) << (soft ? "soft" : "hard") << " seed " << seed;
    }
  std::printf("[impulse] 40 blocks, width 32 vs 1: %d of 8 problems differ, largest gap %.1e of max |out|; width-32 "
              "adjoint dot-product %.1e\n", differing, worst_gap, worst_dot);
  EXPECT_GT(differing, 0);
}

}  // namespace
