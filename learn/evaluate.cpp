// Running a saved policy: PolicyRunner, and deterministic episodes in stiffgrad.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "stiffgrad/learn/mlp.hpp"
#include "stiffgrad/learn/normalizer.hpp"
#include "stiffgrad/learn/train.hpp"

namespace stiffgrad::learn {

struct PolicyRunner::State {
  Mlp<float> actor;            // obs_dim -> act_dim  the policy's mean action
  RunningMeanStd rms;          // obs_dim  the file's observation statistics
  Mlp<float>::Workspace ws;    // the actor's pass, max_batch rows
  std::vector<float> x, y;     // max_batch x obs_dim, max_batch x act_dim  normalized observations, actions
  std::vector<double> xd;      // max_batch x obs_dim  the normalized observations in double
  int max_batch = 0;           // the largest batch act() has seen (the buffers' rows)
};

PolicyRunner::PolicyRunner(const PolicyFile& f) : state_(std::make_shared<State>()) {
  if (f.actor_sizes.size() < 2) throw std::invalid_argument("policy: actor needs at least two layer sizes");
  state_->actor = Mlp<float>(f.actor_sizes, 0);
  if (state_->actor.num_params() != f.actor_params.size())
    throw std::invalid_argument("policy: parameter count does not match the actor's sizes");
  std::copy(f.actor_params.begin(), f.actor_params.end(), state_->actor.params());
  if (static_cast<int>(f.obs_mean.size()) != f.actor_sizes.front() || f.obs_var.size() != f.obs_mean.size())
    throw std::invalid_argument("policy: normalizer size does not match the actor's input");
  state_->rms = RunningMeanStd(static_cast<int>(f.obs_mean.size()), f.obs_clip);
  state_->rms.set(f.obs_mean, f.obs_var, f.obs_count, f.obs_clip);
}

int PolicyRunner::obs_dim() const { return state_->actor.in_dim(); }
int PolicyRunner::act_dim() const { return state_->actor.out_dim(); }

void PolicyRunner::act(const double* obs, int n, double* action) {
  State& s = *state_;
  if (n > s.max_batch) {  // sized on the first call of a batch size, reused after
    s.ws = s.actor.make_workspace(n);
    s.x.resize(static_cast<std::size_t>(n) * obs_dim());
    s.xd.resize(s.x.size());
    s.y.resize(static_cast<std::size_t>(n) * act_dim());
    s.max_batch = n;
  }
  s.rms.normalize(obs, n, s.xd.data());
  for (std::size_t i = 0; i < s.xd.size() && i < static_cast<std::size_t>(n) * obs_dim(); ++i) s.x[i] = static_cast<float>(s.xd[i]);
  s.actor.forward(s.x.data(), n, s.y.data(), s.ws);
  for (std::size_t i = 0; i < static_cast<std::size_t>(n) * act_dim(); ++i) action[i] = s.y[i];
}

namespace {
// the root height of a floating-base model (its first free joint's z), NaN without one
int root_z_index(const Model& m) {
  for (int j = 0; j < m.njnt; ++j)
    if (m.jnt_type[j] == JointType::Free) return m.jnt_qposadr[j] + 2;
  return -1;
}
}  // namespace

EvalResult evaluate_in_stiffgrad(Task& task, const PolicyFile& policy, int episodes, std::uint64_t seed, Backend backend) {
  if (episodes < 1) throw std::invalid_argument("eval: episodes must be >= 1");
  PolicyRunner runner(policy);
  if (runner.obs_dim() != task.obs_dim() || runner.act_dim() != task.act_dim())
    throw std::invalid_argument("eval: the policy's sizes do not match task " + task.name());
  auto model = task.model();
  SimulatorOptions so = task.sim_options();
  so.backend = backend;
  so.nenv = episodes;
  Simulator sim(model, so);
  const int N = episodes, nq = model->nq, nv = model->nv, nu = model->nu, no = task.obs_dim(), na = task.act_dim();
  task.resize(N);
  std::mt19937_64 rng(seed);
  std::vector<double> q(static_cast<std::size_t>(N) * nq), v(static_cast<std::size_t>(N) * nv), obs(static_cast<std::size_t>(N) * no),
      act(static_cast<std::size_t>(N) * na), ctrl(static_cast<std::size_t>(N) * nu);
  for (int e = 0; e < N; ++e) task.reset_env(e, rng, q.data() + static_cast<std::size_t>(e) * nq, v.data() + static_cast<std::size_t>(e) * nv);
  sim.set_state(q.data(), v.data());
  std::vector<char> alive(N, 1), fell(N, 0);
  std::vector<double> ret(N, 0.0), len(N, 0.0), track(N, 0.0), pen(N, 0.0);
  std::vector<int> track_n(N, 0);
  const int zi = root_z_index(*model);
  const int T = task.max_episode_steps();
  for (int t = 0; t < T; ++t) {
    for (int e = 0; e < N; ++e)
      task.observe(e, t, q.data() + static_cast<std::size_t>(e) * nq, v.data() + static_cast<std::size_t>(e) * nv, obs.data() + static_cast<std::size_t>(e) * no);
    runner.act(obs.data(), N, act.data());
    for (int e = 0; e < N; ++e) task.action_to_ctrl(e, t, act.data() + static_cast<std::size_t>(e) * na, ctrl.data() + static_cast<std::size_t>(e) * nu);
    sim.step(ctrl.data());
    sim.get_state(q.data(), v.data());
    const std::vector<double> stats = sim.contact_stats();
    const std::vector<int> status = sim.status();
    bool any = false;
    for (int e = 0; e < N; ++e) {
      if (!alive[e]) continue;
      const double* qe = q.data() + static_cast<std::size_t>(e) * nq;
      const double* ve = v.data() + static_cast<std::size_t>(e) * nv;
      if (status[e] & 1) { alive[e] = 0; fell[e] = 1; continue; }
      ret[e] += task.reward(e, t + 1, qe, ve, act.data() + static_cast<std::size_t>(e) * na);
      len[e] += 1;
      pen[e] += stats[static_cast<std::size_t>(e) * Simulator::kStepStats + 3];
      const double te = task.tracking_error(e, t + 1, qe, ve);
      if (std::isfinite(te)) { track[e] += te; ++track_n[e]; }
      if (zi >= 0 && qe[zi] < 0.3) fell[e] = 1;
      if (task.fallen(e, t + 1, qe, ve)) alive[e] = 0;
      any = any || alive[e];
    }
    if (!any) break;
  }
  EvalResult r;
  r.episodes = N;
  double tr = 0, pn = 0;
  int tn = 0;
  for (int e = 0; e < N; ++e) {
    r.mean_return += ret[e] / N;
    r.mean_length += len[e] / N;
    r.falls += fell[e];
    if (track_n[e]) { tr += track[e] / track_n[e]; ++tn; }
    pn += len[e] > 0 ? pen[e] / len[e] : 0.0;
  }
  r.tracking_error = tn ? tr / tn : std::numeric_limits<double>::quiet_NaN();
  r.mean_penetration = pn / N;
  return r;
}

}  // namespace stiffgrad::learn
