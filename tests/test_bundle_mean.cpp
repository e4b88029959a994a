// The bundle's averaged state and its adjoint (kernels/bundle/bundle_mean.hpp, issue 9), on humanoid.xml
// (a free joint: translation averaged, quaternion sign-aligned, averaged, normalized):
//  - one branch is the identity, bit for bit; a branch stored as -q averages like +q;
//  - dot-product test of adj_bundle_mean_state against the dual-number forward mode;
//  - central finite differences in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/model_arrays.hpp"
#include "kernels/bundle/bundle_mean.hpp"
#include "kernels/base/dual.hpp"
#include "stiffgrad/stiffgrad.hpp"
#include "test_support.hpp"

namespace {

using namespace stiffgrad;
using LC = kern::Contiguous;
using D = kern::Dual<double, 1>;

struct Branches {
  std::vector<double> q, v;  // B x nq, B x nv
};

// B branches around qpos0: coordinates + N(0, 0.05²), the free joint's quaternion rotated by a
// small random rotation, branch 2 (when present) stored with the opposite sign.
Branches make_branches(const Model& md, int B, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01;
  Branches br;
  for (int b = 0; b < B; ++b) {
    std::vector<double> q(md.qpos0.begin(), md.qpos0.end());
    for (double& x : q) x += 0.05 * n01(rng);
    const int qa = md.jnt_qposadr[0] + 3;  // the free joint's quaternion
    double n = 0;
    for (int k = 0; k < 4; ++k) n += q[static_cast<std::size_t>(qa + k)] * q[static_cast<std::size_t>(qa + k)];
    for (int k = 0; k < 4; ++k) q[static_cast<std::size_t>(qa + k)] /= std::sqrt(n) * (b == 2 ? -1.0 : 1.0);
    br.q.insert(br.q.end(), q.begin(), q.end());
    for (int i = 0; i < md.nv; ++i) br.v.push_back(n01(rng));
  }
  return br;
}

template <class Real>
struct Mean {
  ModelArrays<Real> arrays;
  kern::ModelView<Real> m;
  explicit Mean(const Model& md) : arrays(md, ConstraintCapacity{}), m(arrays.host_view()) {}
  void operator()(std::vector<Real>& qb, std::vector<Real>& vb, int B, std::vector<Real>& q, std::vector<Real>& v) {
    q.assign(static_cast<std::size_t>(m.nq), Real(0));
    v.assign(static_cast<std::size_t>(m.nv), Real(0));
    kern::bundle_mean_state(m, kern::View<Real, LC>{qb.data(), LC{}}, kern::View<Real, LC>{vb.data(), LC{}}, B,
                            kern::View<Real, LC>{q.data(), LC{}}, kern::View<Real, LC>{v.data(), LC{}});
  }
};

TEST(BundleMean, OneBranchIsTheIdentityAndSignsAlign) {
  const auto md = load_mjcf(sgtest::humanoid_xml());
  Mean<double> mean(*md);
  Branches br = make_branches(*md, 1, 3);
  std::vector<double> q, v;
  mean(br.q, br.v, 1, q, v);
  EXPECT_TRUE(q == br.q && v == br.v) << "a bundle of one branch must be that branch";
  // three branches, the third stored as -q: the same mean as with +q
  Branches three = make_branches(*md, 3, 4);
  std::vector<double> q1, v1;
  mean(three.q, three.v, 3, q1, v1);
  const int qa = md->jnt_qposadr[0] + 3;
  for (int k = 0; k < 4; ++k) three.q[static_cast<std::size_t>(2 * md->nq + qa + k)] *= -1.0;
  std::vector<double> q2, v2;
  mean(three.q, three.v, 3, q2, v2);
  for (int i = 0; i < md->nq; ++i) EXPECT_NEAR(q1[static_cast<std::size_t>(i)], q2[static_cast<std::size_t>(i)], 1e-15);
  double n = 0;
  for (int k = 0; k < 4; ++k) n += q1[static_cast<std::size_t>(qa + k)] * q1[static_cast<std::size_t>(qa + k)];
  EXPECT_NEAR(n, 1.0, 1e-15);
}

TEST(BundleMean, AdjointMatchesForwardModeAndFiniteDifferences) {
  const auto md = load_mjcf(sgtest::humanoid_xml());
  const int nq = md->nq, nv = md->nv, B = 4;
  Branches br = make_branches(*md, B, 5);
  std::mt19937_64 rng(6);
  std::normal_distribution<double> n01;
  std::vector<double> uq(br.q.size()), uv(br.v.size()), wq(static_cast<std::size_t>(nq)), wv(static_cast<std::size_t>(nv));
  for (auto* x : {&uq, &uv, &wq, &wv})
    for (double& e : *x) e = n01(rng);
  // reverse
  ModelArrays<double> arr(*md, ConstraintCapacity{});
  const auto m = arr.host_view();
  std::vector<double> gq(br.q.size(), 0.0), gv(br.v.size(), 0.0);
  kern::adj_bundle_mean_state(m, kern::View<double, LC>{br.q.data(), LC{}}, B, kern::View<double, LC>{wq.data(), LC{}},
                              kern::View<double, LC>{wv.data(), LC{}}, kern::View<double, LC>{gq.data(), LC{}},
                              kern::View<double, LC>{gv.data(), LC{}});
  double rev = 0;
  for (std::size_t i = 0; i < gq.size(); ++i) rev += gq[i] * uq[i];
  for (std::size_t i = 0; i < gv.size(); ++i) rev += gv[i] * uv[i];
  // forward mode
  Mean<D> meanD(*md);
  std::vector<D> qb(br.q.size()), vb(br.v.size()), q, v;
  for (std::size_t i = 0; i < qb.size(); ++i) { qb[i] = D(br.q[i]); qb[i].d[0] = uq[i]; }
  for (std::size_t i = 0; i < vb.size(); ++i) { vb[i] = D(br.v[i]); vb[i].d[0] = uv[i]; }
  meanD(qb, vb, B, q, v);
  double fwd = 0;
  for (int i = 0; i < nq; ++i) fwd += wq[static_cast<std::size_t>(i)] * q[static_cast<std::size_t>(i)].d[0];
  for (int i = 0; i < nv; ++i) fwd += wv[static_cast<std::size_t>(i)] * v[static_cast<std::size_t>(i)].d[0];
  // central differences
  Mean<double> mean(*md);
  auto loss = [&](double e) {
    std::vector<double> qe(br.q), ve(br.v), qo, vo;
    for (std::size_t i = 0; i < qe.size(); ++i) qe[i] += e * uq[i];
    for (std::size_t i = 0; i < ve.size(); ++i) ve[i] += e * uv[i];
    mean(qe, ve, B, qo, vo);
    double s = 0;
    for (int i = 0; i < nq; ++i) s += wq[static_cast<std::size_t>(i)] * qo[static_cast<std::size_t>(i)];
    for (int i = 0; i < nv; ++i) s += wv[static_cast<std::size_t>(i)] * vo[static_cast<std::size_t>(i)];
    return s;
  };
  const double h = 1e-6, fd = (loss(h) - loss(-h)) / (2 * h);
  const double dot = std::abs(rev - fwd) / std::max(1.0, std::abs(fwd)), efd = std::abs(rev - fd) / std::max(1.0, std::abs(fd));
  std::printf("[bundle mean] humanoid, B = %d: dot-product rel residual %.1e, FD %.1e\n", B, dot, efd);
  EXPECT_LT(dot, 1e-14);
  EXPECT_LT(efd, 1e-8);
}

}  // namespace
