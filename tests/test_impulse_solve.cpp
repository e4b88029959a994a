// The Impulse contact model's impulse solve (kernels/impulse_solve.hpp, issue 9 part 1) and its
// reverse mode (impulse_solve_adjoint.hpp), on problems with the structure of G = J M⁻¹ Jᵀ:
//  - one sticking contact: the sweeps converge to −G⁻¹c (zero contact velocity);
//  - every output satisfies the cone: P_n >= 0, ‖P_t‖ <= μ P_n;
//  - soft mode with every contact deep (σ = 1 to double precision) equals the hard mode bit for bit;
//  - the adjoint against the dual-number forward mode (dot-product test) and central finite
//    differences, in hard and soft mode, with contacts separating, sticking and sliding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/dual.hpp"
#include "kernels/impulse_solve_adjoint.hpp"

namespace {

using namespace stiffgrad;
using LC = kern::Contiguous;
using D = kern::Dual<double, 1>;
template <class Real>
kern::View<Real, LC> V(std::vector<Real>& x) {
  return kern::View<Real, LC>{x.data(), LC{}};
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
  std::vector<Real> sigma(static_cast<std::size_t>(K)), P(static_cast<std::size_t>(3 * K)), out(P.size());
  for (int i = 0; i < K; ++i) sigma[static_cast<std::size_t>(i)] = kern::impulse_activation(depth[static_cast<std::size_t>(i)], Real(kappa));
  kern::impulse_solve(K, V(G), V(c), V(mu), V(sigma), soft, sweeps, V(P), V(out), kern::View<Real, LC>{});
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
      std::vector<double> sigma(K), P(n), out(n), record(static_cast<std::size_t>(p.sweeps * n));
      for (int i = 0; i < K; ++i) sigma[static_cast<std::size_t>(i)] = kern::impulse_activation(p.depth[static_cast<std::size_t>(i)], p.kappa);
      kern::impulse_solve(K, V(p.G), V(p.c), V(p.mu), V(sigma), soft, p.sweeps, V(P), V(out), V(record));
      std::vector<double> Gb(p.G.size()), cb(p.c.size()), mub(p.mu.size()), sb(K), Pb(n);
      kern::adj_impulse_solve(K, V(p.G), V(p.c), V(p.mu), V(sigma), soft, p.sweeps, V(P), V(record), V(w), V(Gb), V(cb),
                              V(mub), V(sb), V(Pb));
      double rev = 0;
      for (std::size_t i = 0; i < Gb.size(); ++i) rev += Gb[i] * uG[i];
      for (std::size_t i = 0; i < cb.size(); ++i) rev += cb[i] * uc[i];
      for (std::size_t i = 0; i < mub.size(); ++i) rev += mub[i] * umu[i];
      for (int i = 0; i < K; ++i)
        rev += kern::adj_impulse_activation(p.depth[static_cast<std::size_t>(i)], p.kappa, sb[static_cast<std::size_t>(i)]) * ud[static_cast<std::size_t>(i)];
      // forward mode
      auto dual = [](const std::vector<double>& x, const std::vector<double>& dx) {
        std::vector<D> r(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) { r[i] = D(x[i]); r[i].d[0] = dx[i]; }
        return r;
      };
      const auto outD = solve<D>(K, dual(p.G, uG), dual(p.c, uc), dual(p.mu, umu), dual(p.depth, ud), p.kappa, soft, p.sweeps);
      double fwd = 0;
      for (int i = 0; i < n; ++i) fwd += w[static_cast<std::size_t>(i)] * outD[static_cast<std::size_t>(i)].d[0];
      // central differences
      auto loss = [&](double e) {
        auto shift = [e](std::vector<double> x, const std::vector<double>& dx) {
          for (std::size_t i = 0; i < x.size(); ++i) x[i] += e * dx[i];
          return x;
        };
        const auto o = solve(K, shift(p.G, uG), shift(p.c, uc), shift(p.mu, umu), shift(p.depth, ud), p.kappa, soft, p.sweeps);
        double s = 0;
        for (int i = 0; i < n; ++i) s += w[static_cast<std::size_t>(i)] * o[static_cast<std::size_t>(i)];
        return s;
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

}  // namespace
