// The policy loop on the CPU backend (learn/policy_loop.hpp): the simulator's backend
// memory is host memory, environment-minor; OpenMP over environments runs the bodies of
// kernels/learn/policy_loop.hpp, and the actor is the trainer's Mlp<float>.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "learn/policy_loop.hpp"
#include "learn/policy_loop_setup.hpp"
#include "kernels/learn/policy_loop.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace stiffgrad::learn {

namespace {

std::size_t sz(long a) { return static_cast<std::size_t>(a); }

int thread_index() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

using LC = kern::Contiguous;
using VS = kern::View<double, kern::Strided>;
using VSc = kern::View<const double, kern::Strided>;

class PolicyLoopCpu final : public PolicyLoop {
 public:
  PolicyLoopCpu(const Task& task, Simulator& sim, const Mlp<float>& actor, int H, bool normalize)
      : sim_(sim), actor_(actor), setup_(task, sim, H, normalize), H_(H), N_(sim.nenv()) {
    const kern::tasks::TaskKernel& k = setup_.kernel;
    k_ = k;
    k_.ctrl_limited = setup_.ctrl_limited.data();
    k_.ctrl_range = setup_.ctrl_range.data();
    k_.ctrl_offset = setup_.ctrl_offset.data();
    k_.ctrl_ref_index = setup_.ctrl_ref_index.data();
    k_.imitation.key_body = setup_.key_body.data();
    view_ = setup_.model_kernels->view();
    // per-thread scratch, sized for the team every loop below asks for (num_threads(threads_))
    threads_ = max_threads();
    const int threads = threads_;
    data_.assign(sz(threads) * 2 * setup_.layout.size, 0.0);
    scratch_dim_ = k_.na + k_.no + k_.nq + k_.nv;
    scratch_.assign(sz(threads) * scratch_dim_, 0.0);
    const int nq = k_.nq, nv = k_.nv, no = k_.no, na = k_.na, nu = k_.nu;
    Q_.assign(sz(H + 1) * nq * N_, 0); V_.assign(sz(H + 1) * nv * N_, 0);
    OBS_.assign(sz(H + 1) * N_ * no, 0); X_.assign(sz(H + 1) * N_ * no, 0);
    MU_.assign(sz(H) * N_ * na, 0); A_.assign(sz(H) * N_ * na, 0);
    EPS_.assign(sz(H) * N_ * na, 0); REF_.assign(sz(H + 1) * N_ * std::max(1, k_.ref_dim), 0);
    STATUS_.assign(sz(H) * N_, 0);
    CTRL_.assign(sz(nu) * N_, 0);
    dA_.assign(sz(H) * N_ * na, 0); steps_active_.assign(sz(N_), H);
    d_mu_.assign(sz(N_) * na, 0); dx_.assign(sz(N_) * no, 0);
    terms_.assign(sz(H) * N_ * na, 0); nonfinite_.assign(sz(H) * N_, 0);
    grad_.assign(actor.num_params(), 0);
    log_std_.assign(na, 0);
    for (int t = 0; t < H; ++t) ws_.push_back(actor.make_workspace(N_));
  }

  void begin_horizon(const std::vector<float>& log_std, const RunningMeanStd& obs_rms, const float* eps,
                     const double* ref) override {
    log_std_ = log_std;
    setup_.set_normalization(obs_rms);
    norm_ = setup_.normalization(setup_.mean.data(), setup_.std_dev.data());
    std::copy(eps, eps + EPS_.size(), EPS_.begin());
    if (k_.ref_dim > 0) std::copy(ref, ref + REF_.size(), REF_.begin());
  }

  void observe(int t) override {
    const double* qpos = static_cast<const double*>(sim_.qpos_backend());
    const double* qvel = static_cast<const double*>(sim_.qvel_backend());
    const kern::Strided em{N_};
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int e = 0; e < N_; ++e) {
      const auto d = bind(thread_index(), 0);
      kern::policy_observe_env(k_, view_, norm_, VSc{qpos + e, em}, VSc{qvel + e, em}, VS{q_row(t) + e, em},
                               VS{v_row(t) + e, em}, ref_row(t, e), d, OBS_.data() + (sz(t) * N_ + e) * k_.no,
                               X_.data() + (sz(t) * N_ + e) * k_.no);
    }
  }

  const void* act(int t) override {
    float* mu = MU_.data() + sz(t) * N_ * k_.na;
    actor_.forward(X_.data() + sz(t) * N_ * k_.no, N_, mu, ws_[sz(t)]);
    const kern::Strided em{N_};
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int e = 0; e < N_; ++e) {
      const std::size_t row = (sz(t) * N_ + e) * k_.na;
      kern::policy_act_env(k_, mu + sz(e) * k_.na, log_std_.data(), EPS_.data() + row, ref_row(t, e),
                           A_.data() + row, VS{CTRL_.data() + e, em});
    }
    return CTRL_.data();
  }

  void record_status(int t) override {
    const int* s = sim_.status_backend();
    std::copy(s, s + N_, STATUS_.begin() + static_cast<std::ptrdiff_t>(t) * N_);
  }

  void download(double* qpos, double* qvel, double* obs, float* x, float* mu, double* a, int* status) override {
    for (int t = 0; t <= H_; ++t) {
      for (int e = 0; e < N_; ++e) {
        for (int i = 0; i < k_.nq; ++i) qpos[(sz(t) * N_ + e) * k_.nq + i] = q_row(t)[sz(i) * N_ + e];
        for (int i = 0; i < k_.nv; ++i) qvel[(sz(t) * N_ + e) * k_.nv + i] = v_row(t)[sz(i) * N_ + e];
      }
    }
    std::copy(OBS_.begin(), OBS_.end(), obs);
    std::copy(X_.begin(), X_.end(), x);
    std::copy(MU_.begin(), MU_.end(), mu);
    std::copy(A_.begin(), A_.end(), a);
    std::copy(STATUS_.begin(), STATUS_.end(), status);
  }

  void begin_backward(const double* dA, const int* steps_active) override {
    std::copy(dA, dA + dA_.size(), dA_.begin());
    std::copy(steps_active, steps_active + N_, steps_active_.begin());
    std::fill(grad_.begin(), grad_.end(), 0.0f);
  }

  void vjp(int t, const void* adj_ctrl_v, void* adj_qpos_v, void* adj_qvel_v, void*) override {
    const double* adj_ctrl = static_cast<const double*>(adj_ctrl_v);
    double* adj_qpos = static_cast<double*>(adj_qpos_v);
    double* adj_qvel = static_cast<double*>(adj_qvel_v);
    const kern::Strided em{N_};
    const int na = k_.na, no = k_.no;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int e = 0; e < N_; ++e) {
      const std::size_t row = (sz(t) * N_ + e) * na;
      const bool ok = kern::policy_adj_act_env(k_, t < steps_active_[sz(e)], A_.data() + row, dA_.data() + row,
                                               ref_row(t, e), VSc{adj_ctrl + e, em}, log_std_.data(), EPS_.data() + row,
                                               scratch(thread_index()), d_mu_.data() + sz(e) * na, terms_.data() + row);
      nonfinite_[sz(t) * N_ + e] = ok ? 0 : 1;
    }
    actor_.backward(d_mu_.data(), N_, grad_.data(), dx_.data(), ws_[sz(t)]);
    if (t == 0) return;  // state 0's adjoint is not needed
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int e = 0; e < N_; ++e) {
      const int th = thread_index();
      double* s = scratch(th);
      kern::policy_adj_observe_env(k_, view_, norm_, t < steps_active_[sz(e)], VSc{q_row(t) + e, em},
                                   VSc{v_row(t) + e, em}, ref_row(t, e), OBS_.data() + (sz(t) * N_ + e) * no,
                                   dx_.data() + sz(e) * no, bind(th, 0), bind(th, 1), s + na, s + na + no,
                                   s + na + no + k_.nq, VS{adj_qpos + e, em}, VS{adj_qvel + e, em});
    }
  }

  int finish_backward(float* grad) override {
    const std::size_t np = grad_.size();
    for (std::size_t i = 0; i < np; ++i) grad[i] += grad_[i];
    int nonfinite = 0;
    for (int t = H_ - 1; t >= 0; --t)  // the host hook's order: steps backward, environments forward
      for (int e = 0; e < N_; ++e) {
        nonfinite += nonfinite_[sz(t) * N_ + e];
        const float* term = terms_.data() + (sz(t) * N_ + e) * k_.na;
        for (int j = 0; j < k_.na; ++j) grad[np + sz(j)] += term[j];
      }
    return nonfinite;
  }

 private:
  double* q_row(int t) { return Q_.data() + sz(t) * k_.nq * N_; }
  double* v_row(int t) { return V_.data() + sz(t) * k_.nv * N_; }
  const double* ref_row(int t, int e) const {
    return k_.ref_dim > 0 ? REF_.data() + (sz(t) * N_ + e) * k_.ref_dim : nullptr;
  }
  double* scratch(int thread) { return scratch_.data() + sz(thread) * scratch_dim_; }
  kern::Data<double, LC> bind(int thread, int which) {
    double* base = data_.data() + (sz(thread) * 2 + which) * setup_.layout.size;
    return kern::Data<double, LC>::bind(kern::View<double, LC>{base, LC{}}, setup_.layout);
  }

  // Shapes: H the horizon, nenv = N_, and nq, nv, nu, na, no, ref_dim of k_.
  Simulator& sim_;
  const Mlp<float>& actor_;      // the trainer's actor (read at every act, not copied)
  PolicyLoopSetup setup_;
  int H_, N_;                    // control steps per horizon, environments (nenv)
  int threads_ = 1;              // OpenMP team of the loops (their scratch is per thread)
  kern::tasks::TaskKernel k_;    // the task's kernel: sizes, kind, pointers into setup_'s host arrays
  kern::ModelView<double> view_{};  // the model's kernel arrays (host)
  kern::ObsNormalization norm_;  // this horizon's observation normalization (setup_'s mean and std)
  std::vector<double> data_;     // threads x 2 Data (d, a) for imitation
  std::vector<double> scratch_;  // threads x (na + no + nq + nv)
  std::size_t scratch_dim_ = 0;  // na + no + nq + nv: one thread's scratch
  std::vector<double> Q_, V_;    // (H + 1) x nq x nenv, nv x nenv  (environment-minor rows)
  std::vector<double> OBS_;      // (H + 1) x nenv x no
  std::vector<float> X_;         // (H + 1) x nenv x no
  std::vector<float> MU_, EPS_;  // H x nenv x na
  std::vector<double> A_, dA_;   // H x nenv x na  actions; the loss's direct ∂L/∂a (begin_backward)
  std::vector<double> REF_;      // (H + 1) x nenv x ref_dim
  std::vector<int> STATUS_;      // H x nenv
  std::vector<double> CTRL_;     // nu x nenv
  std::vector<int> steps_active_;  // nenv  k_e: row t of e is active for t < k_e
  std::vector<float> d_mu_, dx_;  // nenv x na, nenv x no  one step's ∂L/∂μ and the actor's VJP into x
  std::vector<float> terms_;      // H x nenv x na  log σ terms: each (step, environment)'s part of ∂L/∂log σ
  std::vector<int> nonfinite_;    // H x nenv  1 where the action adjoint was non-finite (zeroed)
  std::vector<float> grad_;       // actor parameters  the sweep's ∂L/∂(actor parameters)
  std::vector<float> log_std_;    // na  this horizon's log σ
  std::vector<Mlp<float>::Workspace> ws_;  // H  the actor's pass of each step (kept for vjp)
};

}  // namespace

std::unique_ptr<PolicyLoop> make_policy_loop_cpu(const Task& task, Simulator& sim, const Mlp<float>& actor, int horizon,
                                                 bool normalize_obs) {
  return std::make_unique<PolicyLoopCpu>(task, sim, actor, horizon, normalize_obs);
}

bool has_policy_loop(const Task& task) { return task.kernel_desc().kind != kern::tasks::kTaskKernelNone; }

std::unique_ptr<PolicyLoop> make_policy_loop(const Task& task, Simulator& sim, const Mlp<float>& actor, int horizon,
                                             bool normalize_obs) {
  if (!has_policy_loop(task))
    throw std::invalid_argument("policy loop: task " + task.name() + " has no backend kernels");
  if (sim.real_size() != sizeof(double))
    throw std::invalid_argument("policy loop: the simulator must run in double precision");
  if (sim.options().backend == Backend::Cuda) return make_policy_loop_cuda(task, sim, actor, horizon, normalize_obs);
  return make_policy_loop_cpu(task, sim, actor, horizon, normalize_obs);
}

}  // namespace stiffgrad::learn
