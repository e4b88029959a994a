// The adjoint step kernel (backends/cuda/adjoint_launch.cuh), included by adjoint_step_float.cu and
// adjoint_step_double.cu only.
#pragma once

#include "backends/cuda/adjoint_launch.cuh"
#include "kernels/bundle/bundle_step_adjoint.hpp"
#include "kernels/step/batch_adjoint.hpp"

namespace stiffgrad::cuda_detail {

// Adjoint of control step t for every environment: thread e handles environment e, then adds
// the loss gradient of state t (if any) to the running adjoint.
template <class Real>
__global__ void __launch_bounds__(kBlockSize)
    adjoint_step_kernel(const __grid_constant__ kern::ModelView<Real> m,
                        const __grid_constant__ kern::ModelView<Real> mg,
                        const __grid_constant__ kern::DataLayout layout, Real* q0, Real* v0,
                        Real* u, Real* w0, Real* q1, Real* v1, Real* adj_q, Real* adj_v,
                        Real* adj_u, const Real* dl_q, const Real* dl_v, Real* primal_ws,
                        Real* keep_ws, Real* adjoint_ws, Real* replay, int nenv, int substeps,
                        const int* status, int* replay_ok, const BundlePool<Real> p, int t) {
  const int e = static_cast<int>(blockIdx.x) * kBlockSize + static_cast<int>(threadIdx.x);
  if (e >= nenv) return;
  using L = kern::Strided;
  using V = kern::View<Real, L>;
  const L s{nenv};
  const auto d = kern::Data<Real, L>::bind(V{primal_ws + e, s}, layout);
  const auto d_keep = kern::Data<Real, L>::bind(V{keep_ws + e, s}, layout);
  const V adj_buffer{adjoint_ws + e, s};
  const auto a = kern::Data<Real, L>::bind(adj_buffer, layout);
  // A bundled step runs every branch's adjoint through the same adj_control_step_env call as
  // a nominal one (kernels/bundle/bundle_step_adjoint.hpp: begin, B branch adjoints, end): one inlined
  // copy of the adjoint in this kernel, not two.
  const bool bundled = p.step_in && p.step_in[static_cast<std::size_t>(t) * nenv + e];
  const bool first = bundled && p.step_first[static_cast<std::size_t>(t) * nenv + e] != 0;
  const int B = p.B, nq = m.nq, nv = m.nv, nu = m.nu;
  const BundleScratch<Real> sc = bundled ? BundleScratch<Real>(m, p.scratch, e, nenv) : BundleScratch<Real>();
  const V qb = bundled ? (first ? branch_view(p.start_q, 0, B, nq, e, nenv) : branch_view(p.q, t, B, nq, e, nenv)) : V{};
  const V vb = bundled ? (first ? branch_view(p.start_v, 0, B, nv, e, nenv) : branch_view(p.v, t, B, nv, e, nenv)) : V{};
  const V wb = bundled ? (first ? branch_view(p.start_w, 0, B, nv, e, nenv) : branch_view(p.w, t, B, nv, e, nenv)) : V{};
  const V qb1 = bundled ? branch_view(p.q, t + 1, B, nq, e, nenv) : V{};
  const V vb1 = bundled ? branch_view(p.v, t + 1, B, nv, e, nenv) : V{};
  const V dq = bundled ? branch_view(p.dq, t, B, nv, e, nenv) : V{};
  const V adj_qb = bundled ? branch_view(p.adj_q, 0, B, nq, e, nenv) : V{};
  const V adj_vb = bundled ? branch_view(p.adj_v, 0, B, nv, e, nenv) : V{};
  const V env_q0{q0 + e, s}, env_v0{v0 + e, s}, env_w0{w0 + e, s}, env_u{u + e, s};
  const V env_adj_q{adj_q + e, s}, env_adj_v{adj_v + e, s}, env_adj_u{adj_u + e, s};
  if (bundled)
    kern::adj_bundle_step_begin(m, p.params, first, env_q0, env_v0, env_w0, env_u, qb, vb, wb, qb1, dq,
                                branch_view(p.dv, t, B, nv, e, nenv), env_adj_q, env_adj_v, env_adj_u, adj_qb, adj_vb,
                                sc.u, sc.tq, sc.tv);
  bool same = true;
  for (int k = 0; k < (bundled ? B : 1); ++k) {
    same = kern::adj_control_step_env(
               m, mg, layout, bundled ? qb.at(k * nq) : env_q0, bundled ? vb.at(k * nv) : env_v0,
               bundled ? sc.u : env_u, bundled ? wb.at(k * nv) : env_w0, bundled ? qb1.at(k * nq) : V{q1 + e, s},
               bundled ? vb1.at(k * nv) : V{v1 + e, s}, bundled ? adj_qb.at(k * nq) : env_adj_q,
               bundled ? adj_vb.at(k * nv) : env_adj_v, bundled ? sc.adj_u : env_adj_u, d, d_keep, a, adj_buffer,
               V{replay + e, s}, substeps) &&
           same;
    if (bundled)
      for (int i = 0; i < nu; ++i) env_adj_u[i] += sc.adj_u[i];
  }
  if (bundled) kern::adj_bundle_step_end(m, p.params, first, env_q0, dq, env_adj_q, env_adj_v, adj_qb, adj_vb, sc.tq, sc.sink);
  if (!same && status[e] == kern::kEnvOk) replay_ok[e] = 0;
  if (dl_q)
    for (int i = 0; i < m.nq; ++i) adj_q[i * nenv + e] += dl_q[i * nenv + e];
  if (dl_v)
    for (int i = 0; i < m.nv; ++i) adj_v[i * nenv + e] += dl_v[i * nenv + e];
}

template <class Real>
void launch_adjoint_step(const kern::ModelView<Real>& m, const kern::ModelView<Real>& mg,
                         const kern::DataLayout& layout, Real* q0, Real* v0, Real* u, Real* w0,
                         Real* q1, Real* v1, Real* adj_q, Real* adj_v, Real* adj_u,
                         const Real* dl_q, const Real* dl_v, Real* primal_ws, Real* keep_ws,
                         Real* adjoint_ws, Real* replay, int nenv, int substeps, const int* status,
                         int* replay_ok, const BundlePool<Real>& p, int t, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((nenv + kBlockSize - 1) / kBlockSize);
  adjoint_step_kernel<Real><<<blocks, kBlockSize, 0, stream>>>(
      m, mg, layout, q0, v0, u, w0, q1, v1, adj_q, adj_v, adj_u, dl_q, dl_v, primal_ws, keep_ws,
      adjoint_ws, replay, nenv, substeps, status, replay_ok, p, t);
  SG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stiffgrad::cuda_detail
