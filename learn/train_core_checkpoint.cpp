// TrainerCore's part of a training checkpoint (TrainOptions::checkpoint_path / resume_from;
// the file format in learn/train_checkpoint.hpp).
#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "learn/train_core.hpp"

namespace stiffgrad::learn {

namespace {

std::string real_text(double x) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

std::string ints_text(const std::vector<int>& v) {
  std::string t;
  for (const int x : v) t += (t.empty() ? "" : ",") + std::to_string(x);
  return t;
}

// IterationLog <-> one row of doubles (integers are exact in a double)
constexpr int kLogFields = 22;

void log_to_row(const IterationLog& l, std::vector<double>& out) {
  const double row[kLogFields] = {
      static_cast<double>(l.iteration), static_cast<double>(l.env_steps), l.wall_s, l.mean_return,
      l.mean_episode_length, l.mean_step_reward, l.mean_tracking_error, l.actor_loss, l.critic_loss,
      l.actor_grad_norm, l.bundle_rate, l.disc_loss, static_cast<double>(l.nonfinite), l.sim_s, l.adjoint_s,
      l.network_s, l.evaluated ? 1.0 : 0.0, l.eval_return, l.eval_episode_length, l.eval_tracking_error,
      static_cast<double>(l.eval_falls), static_cast<double>(l.eval_episodes)};
  out.insert(out.end(), row, row + kLogFields);
}

IterationLog row_to_log(const double* r) {
  IterationLog l;
  l.iteration = static_cast<int>(r[0]);
  l.env_steps = static_cast<long long>(r[1]);
  l.wall_s = r[2];
  l.mean_return = r[3];
  l.mean_episode_length = r[4];
  l.mean_step_reward = r[5];
  l.mean_tracking_error = r[6];
  l.actor_loss = r[7];
  l.critic_loss = r[8];
  l.actor_grad_norm = r[9];
  l.bundle_rate = r[10];
  l.disc_loss = r[11];
  l.nonfinite = static_cast<int>(r[12]);
  l.sim_s = r[13];
  l.adjoint_s = r[14];
  l.network_s = r[15];
  l.evaluated = r[16] != 0;
  l.eval_return = r[17];
  l.eval_episode_length = r[18];
  l.eval_tracking_error = r[19];
  l.eval_falls = static_cast<int>(r[20]);
  l.eval_episodes = static_cast<int>(r[21]);
  return l;
}

std::vector<std::int64_t> to_i64(const std::vector<int>& v) { return {v.begin(), v.end()}; }
std::vector<std::int64_t> to_i64(const std::vector<char>& v) { return {v.begin(), v.end()}; }

}  // namespace

std::string options_fingerprint(const TrainOptions& o) {
  std::ostringstream s;
  const auto line = [&](const char* key, const std::string& value) { s << key << '=' << value << '\n'; };
  line("algorithm", algorithm_name(o.algorithm));
  line("envs", std::to_string(o.nenv));
  line("iterations", std::to_string(o.iterations));
  line("seed", std::to_string(o.seed));
  line("backend", backend_name(o.backend));
  line("horizon", std::to_string(o.horizon));
  line("gamma", real_text(o.gamma));
  line("lambda", real_text(o.lambda));
  line("actor_hidden", ints_text(o.actor_hidden));
  line("critic_hidden", ints_text(o.critic_hidden));
  line("actor_lr", real_text(o.actor_lr));
  line("critic_lr", real_text(o.critic_lr));
  line("lr_end", real_text(o.lr_end));
  line("beta1", real_text(o.beta1));
  line("beta2", real_text(o.beta2));
  line("actor_grad_clip", real_text(o.actor_grad_clip));
  line("critic_grad_clip", real_text(o.critic_grad_clip));
  line("critic_iterations", std::to_string(o.critic_iterations));
  line("critic_minibatches", std::to_string(o.critic_minibatches));
  line("target_alpha", real_text(o.target_alpha));
  line("init_log_std", real_text(o.init_log_std));
  line("normalize_obs", std::to_string(o.normalize_obs));
  line("normalize_returns", std::to_string(o.normalize_returns));
  line("bundles", o.bundles.enabled ? std::to_string(o.bundles.branches) + "," + std::to_string(o.bundles.steps) + "," +
                                          real_text(o.bundles.tau) + "," + std::to_string(o.bundles.trigger_on_impulse) + "," +
                                          real_text(o.bundles.sigma_p) + "," + real_text(o.bundles.sigma_v) + "," +
                                          real_text(o.bundles.lambda) + "," + std::to_string(o.bundles.seed) + "," +
                                          std::to_string(o.bundles.pool)
                                    : "off");
  line("reward", reward_name(o.reward));
  line("action_rate_penalty", real_text(o.action_rate_penalty));
  line("critic_ensemble", std::to_string(o.critic_ensemble));
  line("ppo", std::to_string(o.ppo_epochs) + "," + std::to_string(o.ppo_minibatches) + "," + real_text(o.ppo_clip) + "," +
                  real_text(o.ppo_lr) + "," + real_text(o.ppo_value_coef) + "," + real_text(o.ppo_entropy_coef));
  // only with the ADD reward (checkpoints of task-reward runs keep the lines above alone)
  if (o.reward == RewardKind::Add)
    line("add", ints_text(o.add.hidden) + ";" + real_text(o.add.lr) + "," + real_text(o.add.reward_scale) + "," +
                    real_text(o.add.logit_decay) + "," + real_text(o.add.grad_penalty) + "," +
                    std::to_string(o.add.minibatches) + "," + real_text(o.add.penalty_step) + "," +
                    std::to_string(o.add.replay_capacity));
  return s.str();
}

void TrainerCore::store(CheckpointFile& f, const std::vector<IterationLog>& log, int done) const {
  f.put_text("task", task_spec);
  f.put_text("task_options", task.options_words());
  f.put_text("options", options_fingerprint(options));
  f.put("iterations_done", std::vector<std::int64_t>{done});
  f.put("training_seconds", std::vector<double>{seconds_since_start()});
  std::ostringstream r;
  r << rng;
  f.put_text("rng", r.str());
  f.put("obs_rms", net.obs_rms.mean());
  f.put("obs_rms.var", net.obs_rms.var());
  f.put("obs_rms.count_clip", std::vector<double>{net.obs_rms.count(), net.obs_rms.clip()});
  f.put("ret_rms", net.ret_rms.mean());
  f.put("ret_rms.var", net.ret_rms.var());
  f.put("ret_rms.count_clip", std::vector<double>{net.ret_rms.count(), net.ret_rms.clip()});
  f.put("actor", net.actor.param_vector());
  f.put("log_std", net.log_std);
  for (std::size_t k = 0; k < net.critics.size(); ++k) {
    f.put("critic." + std::to_string(k), net.critics[k].param_vector());
    f.put("target_critic." + std::to_string(k), net.target_critics[k].param_vector());
  }
  // the environments where the next iteration starts: state and the constraint solve's warm start
  std::vector<double> q(static_cast<std::size_t>(sizes.nenv) * sizes.nq), v(static_cast<std::size_t>(sizes.nenv) * sizes.nv),
      w(static_cast<std::size_t>(sizes.nenv) * sizes.nv);
  sim->get_state(q.data(), v.data());
  sim->get_warmstart(w.data());
  f.put("qpos", q);
  f.put("qvel", v);
  f.put("warmstart", w);
  f.put("contact_stats", sim->contact_stats());  // the bundle trigger of the next recording's first step
  f.put("task_episode_data", task.episode_data());
  f.put("ep_step", to_i64(episodes.step));
  f.put("ep_limit", to_i64(episodes.limit));
  f.put("ep_counted", to_i64(episodes.counted));
  f.put("ep_return", episodes.return_so_far);
  f.put("ret_run", episodes.running_return);
  f.put("prev_action", prev_action_);
  f.put("done_returns", std::vector<double>(episodes.done_returns.begin(), episodes.done_returns.end()));
  f.put("done_lengths", std::vector<double>(episodes.done_lengths.begin(), episodes.done_lengths.end()));
  if (net.add) {  // the ADD discriminator: network, optimizer, statistics and replay ring
    const AddDiscriminator::State d = net.add->state();
    f.put("add.params", d.params);
    f.put("add.adam.m", d.adam_m);
    f.put("add.adam.v", d.adam_v);
    f.put("add.adam.steps", std::vector<std::int64_t>{d.adam_steps});
    f.put("add.mean_abs", d.mean_abs);
    f.put("add.count", std::vector<double>{d.count});
    f.put("add.replay", d.replay);
  }
  std::vector<double> rows;
  for (const IterationLog& l : log) log_to_row(l, rows);
  f.put("log", rows);
}

int TrainerCore::begin_run(TrainResult& result, const NamedOptimizers& optimizers,
                           const std::function<void(const IterationLog&)>& on_iteration) {
  if (options.resume_from.empty()) return 0;
  const CheckpointFile f = CheckpointFile::read(options.resume_from);
  const int first = restore(f, result.log);
  for (const auto& [name, opt] : optimizers) {
    const std::size_t n = opt->first_moment().size();
    opt->set_state(f.f64(name + ".m", n), f.f64(name + ".v", n), static_cast<long>(f.i64(name + ".steps", 1)[0]));
  }
  if (on_iteration)
    for (const IterationLog& l : result.log) on_iteration(l);
  return first;
}

void TrainerCore::checkpoint_after(int it, const TrainResult& result, const NamedOptimizers& optimizers) const {
  if (!checkpoint_due(it)) return;
  CheckpointFile f;
  store(f, result.log, it + 1);
  for (const auto& [name, opt] : optimizers) {
    f.put(name + ".m", opt->first_moment());
    f.put(name + ".v", opt->second_moment());
    f.put(name + ".steps", std::vector<std::int64_t>{opt->steps()});
  }
  f.write(options.checkpoint_path);
}

int TrainerCore::restore(const CheckpointFile& f, std::vector<IterationLog>& log) {
  const std::string where = "train: --resume " + f.path() + ": ";
  if (f.text("task") != task_spec) throw std::invalid_argument(where + "it trains " + f.text("task") + ", this run " + task_spec);
  if (f.text("task_options") != task.options_words())
    throw std::invalid_argument(where + "its task options are '" + f.text("task_options") + "', this run's '" +
                                task.options_words() + "'");
  const std::string mine = options_fingerprint(options);
  if (f.text("options") != mine) {
    // name every option that differs
    std::istringstream a(f.text("options")), b(mine);
    std::string la, lb, diff;
    while (std::getline(a, la) && std::getline(b, lb))
      if (la != lb) diff += (diff.empty() ? "" : "; ") + la.substr(0, la.find('=')) + ": checkpoint " +
                            la.substr(la.find('=') + 1) + ", this run " + lb.substr(lb.find('=') + 1);
    throw std::invalid_argument(where + "its options differ from this run's (" + (diff.empty() ? "format" : diff) + ")");
  }
  const int done = static_cast<int>(f.i64("iterations_done", 1)[0]);
  if (done < 0 || done > options.iterations)
    throw std::invalid_argument(where + "it has " + std::to_string(done) + " iterations done of " + std::to_string(options.iterations));
  restored_seconds_ = f.f64("training_seconds", 1)[0];
  std::istringstream r(f.text("rng"));
  r >> rng;
  if (!r) throw std::invalid_argument(where + "its random generator state does not parse");
  const auto& oc = f.f64("obs_rms.count_clip", 2);
  net.obs_rms.set(f.f64("obs_rms", static_cast<std::size_t>(sizes.no)), f.f64("obs_rms.var", static_cast<std::size_t>(sizes.no)), oc[0], oc[1]);
  const auto& rc = f.f64("ret_rms.count_clip", 2);
  net.ret_rms.set(f.f64("ret_rms", 1), f.f64("ret_rms.var", 1), rc[0], rc[1]);
  net.actor.param_vector() = f.f32("actor", net.actor.num_params());
  net.log_std = f.f32("log_std", static_cast<std::size_t>(sizes.na));
  for (std::size_t k = 0; k < net.critics.size(); ++k) {
    net.critics[k].param_vector() = f.f32("critic." + std::to_string(k), net.critics[k].num_params());
    net.target_critics[k].param_vector() = f.f32("target_critic." + std::to_string(k), net.target_critics[k].num_params());
  }
  const std::size_t N = static_cast<std::size_t>(sizes.nenv);
  const auto& q = f.f64("qpos", N * sizes.nq);
  const auto& v = f.f64("qvel", N * sizes.nv);
  sim->set_state(q.data(), v.data());
  sim->set_warmstart(f.f64("warmstart", N * sizes.nv).data());
  sim->set_contact_stats(f.f64("contact_stats", N * Simulator::kStepStats).data());
  task.set_episode_data(f.f64("task_episode_data", task.episode_data().size()));
  const auto& es = f.i64("ep_step", N);
  const auto& el = f.i64("ep_limit", N);
  const auto& ec = f.i64("ep_counted", N);
  for (std::size_t e = 0; e < N; ++e) {
    episodes.step[e] = static_cast<int>(es[e]);
    episodes.limit[e] = static_cast<int>(el[e]);
    episodes.counted[e] = static_cast<char>(ec[e]);
  }
  episodes.return_so_far = f.f64("ep_return", N);
  episodes.running_return = f.f64("ret_run", N);
  prev_action_ = f.f64("prev_action", N * sizes.na);
  const auto& dr = f.f64("done_returns");
  const auto& dl = f.f64("done_lengths", dr.size());
  episodes.done_returns.assign(dr.begin(), dr.end());
  episodes.done_lengths.assign(dl.begin(), dl.end());
  if (net.add) {
    AddDiscriminator::State d;
    const std::size_t np = net.add->net().num_params();
    d.params = f.f64("add.params", np);
    d.adam_m = f.f64("add.adam.m", np);
    d.adam_v = f.f64("add.adam.v", np);
    d.adam_steps = static_cast<long>(f.i64("add.adam.steps", 1)[0]);
    d.mean_abs = f.f64("add.mean_abs", static_cast<std::size_t>(sizes.nd));
    d.count = f.f64("add.count", 1)[0];
    d.replay = f.f64("add.replay");
    try {
      net.add->set_state(d);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + e.what());
    }
  }
  const auto& rows = f.f64("log", static_cast<std::size_t>(done) * kLogFields);
  for (int i = 0; i < done; ++i) log.push_back(row_to_log(rows.data() + static_cast<std::size_t>(i) * kLogFields));
  return done;
}

}  // namespace stiffgrad::learn
