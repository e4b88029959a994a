// The `stiffgrad` command line: info, states, dynamics, rollout, grad, gradcheck, demo.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "apps/cli/cli.hpp"
#include "apps/cli/train.hpp"
#include "apps/cli/demo.hpp"
#include "apps/cli/progress.hpp"
#include "stiffgrad/stiffgrad.hpp"

namespace {

using namespace stiffgrad;
using namespace stiffgrad::cli;

const char* kUsage =
    "usage: stiffgrad <command> [options]\n"
    "commands:\n"
    "  info MODEL.xml [--json]                model summary, qpos0, joint and control ranges\n"
    "  states MODEL.xml [--qpos0 | --keyframe NAME | --random N [--seed S]] [-o FILE]\n"
    "                                         starting states as STATES.csv\n"
    "  dynamics MODEL.xml --states FILE       M, bias, passive, actuator forces, qacc per state\n"
    "  rollout MODEL.xml --states FILE --steps N [--backend cpu|cuda] [--float]\n"
    "                                         final qpos, qvel after N Euler steps per state\n"
    "  grad MODEL.xml --states FILE --steps N --weights W.csv\n"
    "                                         gradient of w.[qpos_N; qvel_N] per state\n"
    "  gradcheck MODEL.xml [--steps T] [--substeps S] [--states FILE] [--float]\n"
    "                                         adjoint vs finite differences and forward mode\n"
    "  demo [--model PATH] [--nenv N] ...     batched stepping demonstration (main job)\n"
    "  train TASK --algo shac|shac-bcg|ppo    policy learning (cartpole-swingup, ant-run, g1-imitate:CLIP)\n"
    "  eval POLICY.sgp [--in stiffgrad|mujoco] run a trained policy, in stiffgrad or MuJoCo 2.2.2\n"
    "  help [COMMAND]                         this text, or a command's options\n"
    "  --version                              version and what this build includes\n"
    "N (--steps) counts control steps and must be from 1 to 1000000000 for every command.\n"
    "dynamics, rollout, grad, gradcheck and demo include contacts, joint and tendon limits and\n"
    "friction loss (MuJoCo 2.2.2's soft constraints) unless the model's <flag> disables them.\n"
    "rollout, grad and gradcheck take --contact impulse for Schwarke et al.'s impulse model instead.\n"
    "Runs longer than 2 s show progress on stderr when it is a terminal.\n"
    "Run `stiffgrad <command> --help` for a command's options.\n";

const char* kDynamicsHelp =
    "usage: stiffgrad dynamics MODEL.xml --states STATES.csv\n"
    "STATES.csv: one or more states, one per line, comma-separated: nq qpos, nv qvel, nu ctrl\n"
    "values (MuJoCo conventions, quaternions w x y z); lines starting with # are comments.\n"
    "`stiffgrad states` writes one.\n"
    "For each state prints one JSON object with M (nv x nv, row-major), qfrc_bias,\n"
    "qfrc_passive, qfrc_actuator, qfrc_constraint and qacc (contacts, joint and tendon limits and\n"
    "friction loss with MuJoCo 2.2.2's soft model unless the model's flags disable them), and\n"
    "\"contacts\": a list of {geom1, geom2, dist, pos (3), frame (9)} in MuJoCo's geom numbering and\n"
    "pair order (normal from geom1 to geom2), with 17 significant digits.\n";

const char* kRolloutHelp =
    "usage: stiffgrad rollout MODEL.xml --states STATES.csv --steps N [--backend cpu|cuda] "
    "[--float]\n"
    "                         [--integrator NAME | --implicit-actuators] [--rtol X] [--atol X]\n"
    "                         [--max-steps K] [--event-step S]\n"
    "                         [--contact soft|impulse] [--kappa K] [--sweeps N]\n"
    "From each state (format as for `dynamics`), N steps (N >= 1) of the model timestep with the\n"
    "control held; all states are stepped together as one batch.\n"
    "Prints per state one line: the final qpos then qvel, comma-separated, 17 significant\n"
    "digits. --float simulates in single precision. --implicit-actuators is --integrator\n"
    "implicit-actuators.\n";

const char* kGradHelp =
    "usage: stiffgrad grad MODEL.xml --states STATES.csv --steps N --weights W.csv\n"
    "                      [--integrator NAME] [--rtol X] [--atol X] [--max-steps K] [--event-step S]\n"
    "                      [--cfd D0,DWIDTH,WIDTH,MID,POWER] [--contact soft|impulse] [--kappa K]\n"
    "                      [--sweeps N] [--bundle B,H,TAU[,SIGMA_P,SIGMA_V] [--seed S]\n"
    "                      [--bundle-trigger force|impulse]]\n"
    "For each state row (qpos, qvel, ctrl as for `dynamics`; ctrl held for all N\n"
    "steps of the model timestep, N >= 1) and the matching row of W.csv (nq + nv weights), the loss is\n"
    "L = w . [qpos_N; qvel_N]. Prints one JSON object per line with dL_dqpos (nv, MuJoCo's\n"
    "tangent convention: qpos perturbed as mj_integratePos(qpos, delta, 1)), dL_dqvel (nv) and\n"
    "dL_dctrl (nu, for the held control), 17 significant digits. Exact reverse mode with\n"
    "checkpointed replay; adaptive integrators are differentiated through the steps they took\n"
    "(step sizes held constant). --cfd: contacts from distance, gradients of a contact model\n"
    "that reaches WIDTH beyond touch with impedance D0 there rising to DWIDTH at touch (MuJoCo's\n"
    "solimp spline, MID, POWER), straight-through on each step; values unchanged (DiffMJX's\n"
    "0,0.01,0.05,1,2). --bundle: Bundled Contact Gradients: a state whose largest contact\n"
    "normal force in a step exceeds TAU (N; --bundle-trigger impulse: whose step's contact normal\n"
    "impulse exceeds TAU N s) steps B branches for H steps, perturbed by SIGMA_P (m,\n"
    "default 0.01) and SIGMA_V (m/s, 0.02) on its contact-carrying bodies (keyed by --seed S,\n"
    "default 1), and continues from their average; each line gets \"bundles\": the bundles\n"
    "its rollout started. --implicit-actuators as for `rollout`. Memory grows with N\n"
    "(checkpoints of every step): a request larger than the available memory (MemAvailable in\n"
    "/proc/meminfo) is refused before allocating, with the bytes it needs.\n";

// 1e-06 -> "1e-6": tolerances as people write them.
std::string power_of_ten(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0e", x);
  std::string s = b;
  const auto e = s.find('e');
  const bool negative = s[e + 1] == '-';
  const auto digits = s.find_first_not_of("+-0", e + 1);
  return s.substr(0, e + 1) + (negative ? "-" : "") + (digits == std::string::npos ? "0" : s.substr(digits));
}

// Built from gradcheck_tolerance() so that the help states the bounds the check applies.
std::string gradcheck_help() {
  const GradcheckTolerance d = gradcheck_tolerance(Precision::Double), f = gradcheck_tolerance(Precision::Float);
  const std::string tol = "tolerance\n(double: " + power_of_ten(d.relative) + " relative and " + power_of_ten(d.dot) +
                          " dot-product; --float: " + power_of_ten(f.relative) + " and " + power_of_ten(f.dot) + ").\n";
  return std::string(
             "usage: stiffgrad gradcheck MODEL.xml [--steps T] [--substeps S] [--states FILE] [--float]\n"
             "                           [--samples K] [--seed N] [--fd-step H] [--implicit-actuators]\n"
             "                           [--integrator NAME] [--rtol X] [--atol X] [--max-steps K]\n"
             "                           [--event-step S] [--event-gradients]\n"
             "                           [--contact soft|impulse] [--kappa K] [--sweeps N]\n"
             "Runs a rollout of T control steps (default 20) of S substeps (default 4) and checks the\n"
             "adjoint gradient of the fixed loss L = w . [qpos_T; qvel_T], w ~ N(0, 1) drawn from the\n"
             "seed (default 1), against central finite differences (4-point stencil, step H, default\n"
             "1e-5) of the same kernels run in 80-bit extended precision, so that rounding noise\n"
             "amplified along the rollout does not limit the check (plain double FD, h = 1e-4, is\n"
             "printed beside) on K >= 1 random inputs (default 12: initial qpos in the tangent\n"
             "convention, initial qvel, controls) and against dual-number forward mode (dot-product\n"
             "test). The initial state is the first row of --states (controls held), else qpos0 with\n"
             "small random offsets and velocities, controls near the middle of their range. Prints a\n"
             "table of relative errors |adj - fd| / (|fd| + s), s = (10 e_fd + 1e3 eps g_max) / tol\n"
             "(e_fd: the finite difference's own error, from its stencil at 2H; eps: the run's\n"
             "machine epsilon; g_max: the largest |fd| probed; no absolute floor) and the\n"
             "dot-product residual; exits\n"
             "with status 1 when the replay is not bitwise or either exceeds its ") +
         tol;
}

// State rows stacked environment-major, as Simulator::set_state / set_ctrl take them.
struct Batch {
  std::vector<double> qpos, qvel, ctrl;
};
Batch stack(const std::vector<StateRow>& states) {
  Batch b;
  for (const auto& s : states) {
    b.qpos.insert(b.qpos.end(), s.qpos.begin(), s.qpos.end());
    b.qvel.insert(b.qvel.end(), s.qvel.begin(), s.qvel.end());
    b.ctrl.insert(b.ctrl.end(), s.ctrl.begin(), s.ctrl.end());
  }
  return b;
}

void print_array(const char* key, const std::vector<double>& v, bool last) {
  std::printf("\"%s\": [", key);
  for (std::size_t i = 0; i < v.size(); ++i) std::printf(i ? ", %.17g" : "%.17g", v[i]);
  std::printf(last ? "]" : "], ");
}

// "contacts": MuJoCo's geom numbering and pair order (normal from geom1 to geom2), every contact
// found (also those outside includemargin, which get no constraint rows), 17 digits.
void print_contacts(const std::vector<ContactInfo>& contacts) {
  std::printf("\"contacts\": [");
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    const ContactInfo& c = contacts[k];
    std::printf("%s{\"geom1\": %d, \"geom2\": %d, \"dist\": %.17g, ", k ? ", " : "", c.geom1, c.geom2, c.dist);
    print_array("pos", std::vector<double>(c.pos, c.pos + 3), false);
    print_array("frame", std::vector<double>(c.frame, c.frame + 9), true);
    std::printf("}");
  }
  std::printf("]");
}

int cmd_dynamics(const Args& a) {
  const std::string& path = model_path(a);
  const std::string states_path = a.get("states");
  const auto m = load_with_notes(path);
  const auto states = read_states_csv(states_path, *m);
  for (const auto& s : states) {
    const auto r = constrained_dynamics(*m, s.qpos.data(), s.qvel.data(), s.ctrl.data());
    std::printf("{");
    print_array("M", r.M, false);
    print_array("qfrc_bias", r.qfrc_bias, false);
    print_array("qfrc_passive", r.qfrc_passive, false);
    print_array("qfrc_actuator", r.qfrc_actuator, false);
    print_array("qfrc_constraint", r.qfrc_constraint, false);
    print_array("qacc", r.qacc, false);
    print_contacts(r.contacts);
    std::printf("}\n");
  }
  return 0;
}

// The value of --key, when given, into *out: a finite number > 0, else a usage error.
void positive_option(const Args& a, const char* key, double* out) {
  if (!a.has(key)) return;
  char* end = nullptr;
  const std::string v = a.get(key);
  *out = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(*out > 0) || !std::isfinite(*out))
    throw UsageError(std::string("--") + key + " must be a positive number");
}

// --integrator NAME (or the older --implicit-actuators), --rtol, --atol, --max-steps, --event-step.
void integrator_args(const Args& a, Integrator* integrator, AdaptiveTolerances* tol) {
  if (a.has("implicit-actuators")) *integrator = Integrator::ImplicitDampingEuler;
  if (a.has("integrator") && !parse_integrator(a.get("integrator"), integrator))
    throw UsageError("--integrator must be euler, implicit-actuators, rk4, tsit5, dopri5 or bosh3, got '" +
                     a.get("integrator") + "'");
  positive_option(a, "rtol", &tol->rtol);
  positive_option(a, "atol", &tol->atol);
  positive_option(a, "event-step", &tol->event_step);
  const bool adaptive = *integrator == Integrator::Tsit5 || *integrator == Integrator::Dopri5 ||
                        *integrator == Integrator::Bosh3;
  if (a.has("event-step") && !adaptive)
    throw UsageError("--event-step locates events inside the adaptive steps: it needs --integrator tsit5, dopri5 or bosh3");
  if (a.has("max-steps")) tol->max_steps = static_cast<int>(parse_int_in(a.get("max-steps"), "--max-steps", 1, 1000000));
  if (a.has("event-gradients")) {
    if (!adaptive || !a.has("event-step"))
      throw UsageError("--event-gradients corrects the gradient at located events: it needs --integrator tsit5, "
                       "dopri5 or bosh3 and --event-step S");
    tol->event_gradients = true;
  }
}

// --contact soft|impulse, --kappa K, --sweeps N, read after the integrator (and --cfd): the
// impulse model's own Moreau midpoint stepping excludes other integrators and --cfd, and
// --kappa and --sweeps mean nothing without it; each is a usage error, found before any file
// is read.
void contact_args(const Args& a, Integrator integrator, bool cfd, ContactModel* contact, ImpulseContact* impulse) {
  if (a.has("contact") && !parse_contact_model(a.get("contact"), contact))
    throw UsageError("--contact must be soft or impulse, got '" + a.get("contact") + "'");
  const bool on = *contact == ContactModel::Impulse;
  for (const char* key : {"kappa", "sweeps"})
    if (a.has(key) && !on) throw UsageError(std::string("--") + key + " needs --contact impulse");
  positive_option(a, "kappa", &impulse->kappa);
  if (a.has("sweeps")) impulse->sweeps = static_cast<int>(parse_int_in(a.get("sweeps"), "--sweeps", 1, 1000));
  if (on && integrator != Integrator::SemiImplicitEuler && integrator != Integrator::ImplicitDampingEuler)
    throw UsageError(std::string("--contact impulse steps with its own integrator (Moreau midpoint): it needs "
                                 "--integrator euler or implicit-actuators, not ") + integrator_name(integrator));
  if (on && cfd) throw UsageError("--contact impulse cannot be combined with --cfd");
}

// The defaults are read from the library's option structs (their one home), not restated.
std::string integrator_help() {
  const AdaptiveTolerances tol;
  return "--integrator euler|implicit-actuators|rk4|tsit5|dopri5|bosh3 (default euler: MuJoCo's;\n"
         "implicit-actuators: actuator velocity gains implicit too; rk4: MuJoCo's RK4; tsit5, dopri5,\n"
         "bosh3: adaptive Runge-Kutta, each state taking its own steps inside every timestep, with\n"
         "--rtol (" + power_of_ten(tol.rtol) + "), --atol (" + power_of_ten(tol.atol) + ") and --max-steps (" +
         std::to_string(tol.max_steps) + ") trial steps per timestep; --event-step S\n"
         "(seconds, default off): event location, a step across which the constraint rows change is\n"
         "halved until at most S long, so that gradients through the steps converge with the\n"
         "tolerance; each event costs about log2(step / S) more trials).\n";
}

// For the commands that differentiate (grad, gradcheck).
const char* kEventGradientsHelp =
    "--event-gradients (with --event-step): event-aware gradients, the saltation term of every\n"
    "contact switching on or off at a located event added to the gradient through the steps, so\n"
    "that it is the derivative of the simulated flow (values unchanged).\n";

std::string contact_help() {
  const ImpulseContact impulse;
  char kappa[32];
  std::snprintf(kappa, sizeof kappa, "%g", impulse.kappa);
  return "--contact soft|impulse (default soft: MuJoCo 2.2.2's soft constraints; impulse: Schwarke et\n"
         "al.'s velocity-level impulses with Moreau midpoint stepping, the model BCG trains with:\n"
         "--sweeps N (" + std::to_string(impulse.sweeps) + "; 1 to 1000) projected Gauss-Seidel sweeps per timestep with Coulomb\n"
         "projection and the soft activation sigma(K d) of the penetration d, --kappa K (" + kappa + ", 1/m),\n"
         "contacts detected from ln(1e6)/K apart; its Moreau midpoint stepping is its own integrator,\n"
         "so it takes --integrator euler or implicit-actuators (or --implicit-actuators) only, and\n"
         "not --cfd; models with limited ball joints, limited tendons or tendon friction loss are\n"
         "refused).\n";
}

int cmd_rollout(const Args& a) {
  // usage errors before any file is read
  const std::string& path = model_path(a);
  const std::string states_path = a.get("states");
  const int steps = parse_steps(a.get("steps"));
  SimulatorOptions opt;
  opt.constraints = true;  // contacts, limits, friction loss unless the model's flags disable them
  opt.precision = a.has("float") ? Precision::Float : Precision::Double;
  integrator_args(a, &opt.integrator, &opt.adaptive);
  contact_args(a, opt.integrator, false, &opt.contact_model, &opt.impulse);
  const std::string backend = a.has("backend") ? a.get("backend") : "cpu";
  if (backend == "cpu") opt.backend = Backend::Cpu;
  else if (backend == "cuda") opt.backend = Backend::Cuda;
  else
    throw UsageError("--backend must be cpu or cuda, got '" + backend + "'");
  const auto m = load_with_notes(path);
  const auto states = read_states_csv(states_path, *m);  // throws on no rows
  opt.nenv = static_cast<int>(states.size());
  Simulator sim(m, opt);
  const Batch b = stack(states);
  std::vector<double> qpos = b.qpos, qvel = b.qvel, ctrl = b.ctrl;
  sim.set_state(qpos.data(), qvel.data());
  sim.set_ctrl(ctrl.data());
  {
    Progress progress("rollout", steps);
    for (int t = 0; t < steps; ++t) {
      sim.step();
      progress.update(t + 1);
    }
  }
  sim.synchronize();
  sim.get_state(qpos.data(), qvel.data());
  const auto status = sim.status();
  for (int e = 0; e < opt.nenv; ++e) {
    if (status[e] & 1)
      std::fprintf(stderr, "warning: state %d became non-finite; its last finite state is printed\n", e + 1);
    if (status[e] & 2)
      std::fprintf(stderr, "warning: state %d exceeded its contact or constraint-row capacity\n", e + 1);
    if (status[e] & 4)
      std::fprintf(stderr, "warning: state %d reached --max-steps in some timestep and took a step that failed "
                           "the tolerance\n", e + 1);
    bool first = true;
    for (int i = 0; i < m->nq; ++i, first = false) std::printf(first ? "%.17g" : ",%.17g", qpos[e * m->nq + i]);
    for (int i = 0; i < m->nv; ++i, first = false) std::printf(first ? "%.17g" : ",%.17g", qvel[e * m->nv + i]);
    std::printf("\n");
  }
  return sim.num_failed() > 0 ? 3 : 0;
}

int cmd_grad(const Args& a) {
  const std::string& path = model_path(a);
  const std::string states_path = a.get("states"), weights_path = a.get("weights");
  const int steps = parse_steps(a.get("steps"));
  const auto m = load_with_notes(path);
  const auto states = read_states_csv(states_path, *m);
  const auto weights = read_csv_rows(weights_path, m->nq + m->nv);
  if (weights.size() != states.size())
    throw std::runtime_error(weights_path + ": " + std::to_string(weights.size()) + " weight rows for " +
                             std::to_string(states.size()) + " states");
  const int nenv = static_cast<int>(states.size());
  SimulatorOptions opt;
  opt.nenv = nenv;
  opt.constraints = true;
  integrator_args(a, &opt.integrator, &opt.adaptive);
  if (a.has("cfd")) {
    try {
      opt.cfd = parse_contacts_from_distance(a.get("cfd"));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  contact_args(a, opt.integrator, opt.cfd.enabled, &opt.contact_model, &opt.impulse);
  if (opt.cfd.enabled && opt.adaptive.event_gradients)
    throw UsageError("--event-gradients and --cfd are two remedies for contact gradients; choose one");
  BundleOptions bundles;
  if (a.has("bundle")) {
    try {
      bundles = parse_bundle_options(a.get("bundle"));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (a.has("seed")) bundles.seed = static_cast<std::uint64_t>(parse_int_in(a.get("seed"), "--seed", 0, 0x7fffffffL));
    if (a.has("bundle-trigger")) {
      const std::string trigger = a.get("bundle-trigger");
      if (trigger != "force" && trigger != "impulse")
        throw UsageError("--bundle-trigger must be force or impulse, got '" + trigger + "'");
      bundles.trigger_on_impulse = trigger == "impulse";
    }
  } else if (a.has("seed") || a.has("bundle-trigger")) {
    throw UsageError(std::string(a.has("seed") ? "--seed" : "--bundle-trigger") +
                     " needs --bundle (it keys or triggers the bundles)");
  }
  Simulator sim(m, opt);
  refuse_above(grad_memory(sim, steps, bundles), available_memory(), steps, nenv);
  if (bundles.enabled)
    std::fprintf(stderr, "bundles: B %d, H %d, sigma_p %g m, sigma_v %g m/s, seed %llu; trigger: %s > %g %s\n",
                 bundles.branches, bundles.steps, bundles.sigma_p, bundles.sigma_v,
                 static_cast<unsigned long long>(bundles.seed),
                 bundles.trigger_on_impulse ? "the step's contact normal impulse" : "the largest contact normal force",
                 bundles.tau, bundles.trigger_on_impulse ? "N s" : "N");
  const Batch b = stack(states);
  std::vector<double> qpos = b.qpos, qvel = b.qvel, ctrl = b.ctrl;
  sim.set_state(qpos.data(), qvel.data());
  sim.set_ctrl(ctrl.data());
  Rollout ro(sim, steps, bundles);
  ro.begin();
  Progress forward("grad forward", steps);
  for (int t = 0; t < steps; ++t) {
    ro.step();
    forward.update(t + 1);
  }
  forward.finish();
  // Rollout::backward reports no progress of its own; after a long forward pass say that the
  // (similarly long) backward pass is running rather than leave the terminal silent
  if (forward.shown()) std::fprintf(stderr, "grad backward: %d steps...\n", steps);
  std::vector<double> dq(static_cast<std::size_t>(steps + 1) * nenv * m->nq, 0.0);
  std::vector<double> dv(static_cast<std::size_t>(steps + 1) * nenv * m->nv, 0.0);
  for (int e = 0; e < nenv; ++e) {
    std::copy(weights[e].begin(), weights[e].begin() + m->nq,
              dq.begin() + (static_cast<std::ptrdiff_t>(steps) * nenv + e) * m->nq);
    std::copy(weights[e].begin() + m->nq, weights[e].end(),
              dv.begin() + (static_cast<std::ptrdiff_t>(steps) * nenv + e) * m->nv);
  }
  std::vector<double> gq(static_cast<std::size_t>(nenv) * m->nv), gv(gq.size());
  std::vector<double> gu(static_cast<std::size_t>(steps) * nenv * m->nu);
  ro.backward(dq.data(), dv.data(), gq.data(), gv.data(), gu.data());
  const auto status = sim.status();
  const std::vector<int> per_env = ro.bundles_per_env();
  if (ro.bundles_skipped() > 0)
    std::fprintf(stderr, "note: %d bundle triggers found the pool full and stepped nominally\n", ro.bundles_skipped());
  for (int e = 0; e < nenv; ++e) {
    if (status[e] & 1) std::fprintf(stderr, "warning: state %d became non-finite; its gradient is meaningless\n", e + 1);
    if (status[e] & 4)
      std::fprintf(stderr, "warning: state %d reached --max-steps in some timestep (the gradient is that of the "
                           "steps taken)\n", e + 1);
    std::vector<double> held(m->nu, 0.0);  // the control is held: sum over the steps
    for (int t = 0; t < steps; ++t)
      for (int u = 0; u < m->nu; ++u) held[u] += gu[(static_cast<std::size_t>(t) * nenv + e) * m->nu + u];
    std::printf("{");
    print_array("dL_dqpos", std::vector<double>(gq.begin() + e * m->nv, gq.begin() + (e + 1) * m->nv), false);
    print_array("dL_dqvel", std::vector<double>(gv.begin() + e * m->nv, gv.begin() + (e + 1) * m->nv), false);
    print_array("dL_dctrl", held, true);
    if (bundles.enabled) std::printf(", \"bundles\": %d", per_env[static_cast<std::size_t>(e)]);
    std::printf("}\n");
  }
  return sim.num_failed() > 0 ? 3 : 0;
}

int cmd_gradcheck(const Args& a) {
  const std::string& path = model_path(a);
  GradcheckOptions opt;
  if (a.has("steps")) opt.steps = parse_steps(a.get("steps"));
  if (a.has("substeps")) opt.substeps = static_cast<int>(parse_int_in(a.get("substeps"), "--substeps", 1, 1000000));
  if (a.has("samples")) opt.samples = static_cast<int>(parse_int_in(a.get("samples"), "--samples", 1, 1000000));
  if (a.has("fd-step")) {
    char* end = nullptr;
    opt.fd_step = std::strtod(a.get("fd-step").c_str(), &end);
    if (*end != '\0' || !(opt.fd_step > 0)) throw UsageError("--fd-step must be a positive number");
  }
  if (a.has("seed")) opt.seed = static_cast<std::uint64_t>(parse_int_in(a.get("seed"), "--seed", 0, 0x7fffffffL));
  opt.precision = a.has("float") ? Precision::Float : Precision::Double;
  integrator_args(a, &opt.integrator, &opt.adaptive);
  contact_args(a, opt.integrator, false, &opt.contact_model, &opt.impulse);
  opt.constraints = true;
  const auto m = load_with_notes(path);
  if (a.has("states")) {
    const auto states = read_states_csv(a.get("states"), *m);  // throws on no rows
    opt.qpos = states[0].qpos;
    opt.qvel = states[0].qvel;
    opt.ctrl = states[0].ctrl;
  }
  Progress progress("gradcheck", opt.samples, "finite-difference samples");
  opt.progress = [&progress](int done, int) { progress.update(done); };
  const auto rep = run_gradcheck(m, opt);
  progress.finish();
  std::printf("gradcheck %s: T=%d S=%d %s, loss w.[qpos_T; qvel_T], w ~ N(0,1) seed %llu\n",
              m->file.c_str(), opt.steps, opt.substeps, opt.precision == Precision::Float ? "float" : "double",
              static_cast<unsigned long long>(opt.seed));
  std::printf("%-20s %23s %23s %9s %23s\n", "input", "adjoint", "FD (extended)", "rel err", "FD (double)");
  for (const auto& r : rep.rows)
    std::printf("%-20s %23.15e %23.15e %9.2e %23.15e\n", r.input.c_str(), r.adjoint, r.finite_difference,
                r.rel_error, r.finite_difference_double);
  std::printf("max relative error      %.2e (tolerance %.0e; against double FD: %.2e)\n", rep.max_rel_error,
              rep.tolerance, rep.max_rel_error_double_fd);
  std::printf("dot-product residual    %.2e (tolerance %.0e)\n", rep.dot_residual, rep.dot_tolerance);
  std::printf("replay bitwise          %s\n", rep.replay_bitwise ? "yes" : "NO");
  if (rep.solves_at_iteration_cap > 0)
    std::printf("note: %d of %d constraint solves stopped at the model's iterations cap (%d): the adjoint is\n"
                "      the implicit gradient at the point returned, finite differences follow the truncated\n"
                "      iteration, so they need not agree; raise <option iterations> to compare\n"
                "      (docs/physics/constraints.md, \"Known limits\")\n",
                rep.solves_at_iteration_cap, rep.constraint_solves, m->opt.iterations);
  std::printf("%s\n", rep.passed ? "PASSED" : "FAILED");
  return rep.passed ? 0 : 1;
}

bool wants_help(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) return true;
  return false;
}

// A command's help text (`stiffgrad COMMAND --help`, `stiffgrad help COMMAND`); empty for an
// unknown command.
std::string command_help(const std::string& cmd) {
  if (cmd == "info") return kInfoHelp;
  if (cmd == "states") return kStatesHelp;
  if (cmd == "dynamics") return kDynamicsHelp;
  if (cmd == "rollout") return std::string(kRolloutHelp) + integrator_help() + contact_help();
  if (cmd == "grad") return std::string(kGradHelp) + integrator_help() + kEventGradientsHelp + contact_help();
  if (cmd == "gradcheck") return gradcheck_help() + integrator_help() + kEventGradientsHelp + contact_help();
  if (cmd == "demo") return stiffgrad::demo_help();
  if (cmd == "train") return train_help();
  if (cmd == "eval") return kEvalHelp;
  return "";
}

// `stiffgrad --version`: the version and what this build can run.
void print_version() {
  std::printf("stiffgrad %s\n", STIFFGRAD_VERSION);
#ifdef STIFFGRAD_CLI_CUDA
  std::printf("backends: cpu (OpenMP), cuda (built; %s)\n", cuda_available() ? "a device is present" : "no device found");
#else
  std::printf("backends: cpu (OpenMP); cuda not built (configure with -DSTIFFGRAD_CUDA=ON where nvcc is found)\n");
#endif
#ifdef STIFFGRAD_WITH_MUJOCO
  std::printf("eval --in mujoco: MuJoCo 2.2.2 linked\n");
#else
  std::printf("eval --in mujoco: not built (no MuJoCo at configure time)\n");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "--version" || cmd == "version") {
    if (argc > 2) return std::fprintf(stderr, "stiffgrad: %s takes no arguments\n", argv[1]), 2;
    return print_version(), 0;
  }
  if (cmd == "help") {
    if (argc == 2) return std::fputs(kUsage, stdout), 0;
    const std::string text = argc == 3 ? command_help(argv[2]) : "";
    if (text.empty()) {
      std::fprintf(stderr, "stiffgrad help: %s\n%s", argc == 3 ? ("unknown command '" + std::string(argv[2]) + "'").c_str()
                                                              : "takes at most one COMMAND", kUsage);
      return 2;
    }
    return std::fputs(text.c_str(), stdout), 0;
  }
  if (wants_help(argc, argv)) {
    const std::string text = command_help(cmd);
    if (!text.empty()) return std::fputs(text.c_str(), stdout), 0;
  }
  try {
    if (cmd == "info") return cmd_info(parse_args(argc, argv, {"json"}, {}));
    if (cmd == "states") return cmd_states(parse_args(argc, argv, {"qpos0"}, {"keyframe", "random", "seed", "output"}));
    if (cmd == "dynamics") return cmd_dynamics(parse_args(argc, argv, {}, {"states"}));
    if (cmd == "rollout")
      return cmd_rollout(parse_args(argc, argv, {"float", "implicit-actuators"},
                                    {"states", "steps", "backend", "integrator", "rtol", "atol",
                                     "max-steps", "event-step", "contact", "kappa", "sweeps"}));
    if (cmd == "grad")
      return cmd_grad(parse_args(argc, argv, {"implicit-actuators", "event-gradients"},
                                 {"states", "steps", "weights", "integrator", "rtol", "atol", "max-steps", "event-step", "cfd",
                                  "contact", "kappa", "sweeps", "bundle", "seed", "bundle-trigger"}));
    if (cmd == "gradcheck")
      return cmd_gradcheck(parse_args(argc, argv, {"float", "implicit-actuators", "event-gradients"},
                                      {"steps", "substeps", "states", "samples", "seed", "fd-step", "integrator", "rtol",
                                       "atol", "max-steps", "event-step", "contact", "kappa", "sweeps"}));
    if (cmd == "demo") return stiffgrad::run_demo(argc, argv);
    if (cmd == "train")
      return cmd_train(parse_args(argc, argv, {"explicit-servos"}, {"algo", "envs", "iterations", "seed", "backend", "out", "horizon",
                                                   "threads", "contact", "kappa", "episode-steps", "data", "actor-lr",
                                                   "critic-lr", "ppo-lr", "log-std", "tau", "reward", "action-rate", "critics", "disc-replay", "disc-minibatches", "policy-loop",
                                                   "eval-every", "eval-episodes", "servo-targets", "action-scale", "clip-window", "init",
                                                   "checkpoint-every", "resume", "policy-every"}));
    if (cmd == "eval")
      return cmd_eval(parse_args(argc, argv, {"explicit-servos"}, {"task", "episodes", "in", "seed", "data", "contact", "kappa", "episode-steps", "servo-targets", "action-scale", "clip-window",
                                                                 "json"}));
    std::fprintf(stderr, "stiffgrad: unknown command '%s'\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "stiffgrad %s: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stiffgrad %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
