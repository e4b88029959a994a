// Host side of the staged control step (kernels/step/staged_step.hpp): the candidate pairs
// grouped by narrow-phase routine, and the order of the stages. The CUDA backend launches one
// kernel per stage in this order (backends/cuda/staged_step.cuh); the host emulation test
// (tests/test_staged_step.cpp) runs the same stages over the device's workspace layout.
#pragma once

#include <array>
#include <vector>

#include "kernels/collision/collision.hpp"
#include "kernels/step/staged_step.hpp"
#include "stiffgrad/model.hpp"

namespace stiffgrad {

struct PairGroups {
  std::vector<int> pairs;                         // ncpair: pair ids grouped by routine,
                                                  //   increasing within a group
  std::array<int, kern::kPairRoutines + 1> begin{};  // routine r: pairs[begin[r] .. begin[r + 1])
  int count(int r) const { return begin[r + 1] - begin[r]; }
};

inline PairGroups make_pair_groups(const Model& m) {
  PairGroups g;
  std::vector<int> routine(static_cast<std::size_t>(m.ncpair));
  for (int c = 0; c < m.ncpair; ++c) {
    const auto t1 = static_cast<int>(m.geom_type[static_cast<std::size_t>(m.cpair_geom1[static_cast<std::size_t>(c)])]);
    const auto t2 = static_cast<int>(m.geom_type[static_cast<std::size_t>(m.cpair_geom2[static_cast<std::size_t>(c)])]);
    routine[static_cast<std::size_t>(c)] = kern::pair_routine(t1, t2);
  }
  for (int r = 0; r < kern::kPairRoutines; ++r) {
    g.begin[static_cast<std::size_t>(r)] = static_cast<int>(g.pairs.size());
    for (int c = 0; c < m.ncpair; ++c)
      if (routine[static_cast<std::size_t>(c)] == r) g.pairs.push_back(c);
  }
  g.begin[kern::kPairRoutines] = static_cast<int>(g.pairs.size());
  return g;
}

// Which stages a model's staged substep has (kernels/step/staged_step.hpp).
struct StagedPlan {
  bool impulse = false;      // the Impulse model's stages (kern::staged_step_is_impulse)
  bool constraints = false;  // rows and solve stages (m.nefc_max > 0)
  bool contacts = false;     // narrow stages (constraints and m.contact_enabled)
  int rk_evaluations = 0;    // Runge–Kutta: evaluations launched per substep
                             // (kern::rk_evaluations_bound); 0: the Euler family or Impulse
  int rk_integrator = 0;     // the Runge–Kutta method (kern::kIntEuler: none)
  int rk_steps = 0;          // Runge–Kutta: accepted steps per substep at most (the adjoint's
                             // rounds: max_steps for the adaptive methods, 1 for RK4)
  bool rk_event_gradients = false;  // the adjoint applies the saltation at located events
};

template <class Real>
StagedPlan make_staged_plan(const kern::ModelView<Real>& m) {  // reads m's scalars only
  StagedPlan p;
  p.impulse = kern::staged_step_is_impulse(m);
  p.constraints = m.nefc_max > 0;
  p.contacts = p.constraints && m.contact_enabled != 0;
  p.rk_evaluations =
      !p.impulse && m.rk_integrator != kern::kIntEuler ? kern::rk_evaluations_bound(m) : 0;
  if (p.rk_evaluations > 0) {
    p.rk_integrator = m.rk_integrator;
    p.rk_steps =
        kern::rk_tableau(m.rk_integrator).adaptive ? (m.rk_max_steps > 1 ? m.rk_max_steps : 1) : 1;
    p.rk_event_gradients = m.rk_event_gradients != 0;
  }
  return p;
}

// The narrow stage: one call per routine present.
template <class Exec>
void run_staged_narrow(Exec& x, const PairGroups& g) {
  for (int r = 0; r < kern::kPairRoutines; ++r)
    if (g.count(r) > 0) x.narrow(r, g.begin[static_cast<std::size_t>(r)], g.count(r));
}

// A Runge–Kutta evaluation of the dynamics up to its constraint solve: rk_smooth(), the narrow
// stage, constraint_rows() and constraint_solve() (with constraints), for the environments whose
// controller is not done.
template <class Exec>
void run_staged_evaluation(Exec& x, const PairGroups& g, const StagedPlan& plan) {
  x.rk_smooth();
  if (plan.contacts) run_staged_narrow(x, g);
  if (plan.constraints) {
    x.constraint_rows();
    x.constraint_solve();
  }
}

// One substep of the staged pipeline through `x`, which provides
//   the Euler family: smooth(), narrow(routine, first, count) (the pairs
//     groups.pairs[first .. first + count)), constraint_rows(), constraint_solve() and
//     constraint_finish() (without constraints: smooth() and constraint_finish() alone);
//   the Impulse model: impulse_half_step(), impulse_smooth(), narrow(), impulse_rows(),
//     impulse_solve() and impulse_finish();
//   the Runge–Kutta methods: rk_begin(), then plan.rk_evaluations times rk_smooth(), narrow(),
//     constraint_rows(), constraint_solve() (with constraints) and rk_finish(); the stages of an
//     evaluation skip the environments whose controller is done.
// Pairs without a routine (kRoutineNone: never compiled into a model with constraints, kept for
// safety) go through the run-time dispatch.
template <class Exec>
void run_staged_substep(Exec& x, const PairGroups& g, const StagedPlan& plan) {
  if (plan.impulse) {
    x.impulse_half_step();
    x.impulse_smooth();
    if (plan.contacts) run_staged_narrow(x, g);
    x.impulse_rows();
    x.impulse_solve();
    x.impulse_finish();
    return;
  }
  if (plan.rk_evaluations > 0) {
    x.rk_begin();
    for (int k = 0; k < plan.rk_evaluations; ++k) {
      run_staged_evaluation(x, g, plan);
      x.rk_finish();
    }
    return;
  }
  x.smooth();
  if (plan.contacts) run_staged_narrow(x, g);
  if (plan.constraints) {
    x.constraint_rows();
    x.constraint_solve();
  }
  x.constraint_finish();
}

// One control step of the staged pipeline: x.begin(), the substeps (run_staged_substep), x.end().
template <class Exec>
void run_staged_control_step(Exec& x, const PairGroups& g, const StagedPlan& plan, int substeps) {
  x.begin();
  for (int s = 0; s < substeps; ++s) run_staged_substep(x, g, plan);
  x.end();
}

// The contacts at the state alone (a bundle's start, kern::bundle_start_from_contacts) through
// `x`, which provides contacts_begin(), narrow() as above and contacts_gather().
template <class Exec>
void run_staged_contact_search(Exec& x, const PairGroups& g, bool contact_enabled) {
  x.contacts_begin();
  if (contact_enabled) run_staged_narrow(x, g);
  x.contacts_gather();
}

// One control step under the bundle scheduler (Bundled Contact Gradients) through `x`, which
// provides trigger() (this step's flags: which environments are bundled, which start a bundle),
// nominal_step() (every environment not bundled), contact_search() (run_staged_contact_search at
// the starting environments' states), bundle_start() (their perturbations and branch starts),
// branches_begin(), branch_step(b) for each of the `branches` (the nominal control step over
// branch b of the bundled environments) and branches_finish() (kernels/bundle/bundle_step.hpp).
// The CUDA backend launches these in this order (backends/cuda/bundle_cuda.cuh); the host
// emulation test (tests/test_staged_bundle.cpp) runs them over the device's layout.
template <class Exec>
void run_bundled_step(Exec& x, int branches) {
  x.trigger();
  x.nominal_step();
  x.contact_search();
  x.bundle_start();
  x.branches_begin();
  for (int b = 0; b < branches; ++b) x.branch_step(b);
  x.branches_finish();
}

// The adjoint of one control step under the bundle scheduler through `x`, which provides
// nominal_adjoint() (the staged adjoint of every environment not bundled in this step),
// bundle_adjoint_begin() (the bundled ones: branch checkpoints and the average's adjoint,
// kern::adj_bundle_branches_begin_env), branch_adjoint(b) for each of the `branches` (the staged
// adjoint over branch b of the bundled environments) and bundle_adjoint_end()
// (kern::adj_bundle_branches_end_env). The CUDA backend launches these in this order
// (backends/cuda/bundle_cuda.cuh); tests/test_staged_bundle.cpp emulates them.
template <class Exec>
void run_bundled_adjoint_step(Exec& x, int branches) {
  x.nominal_adjoint();
  x.bundle_adjoint_begin();
  for (int b = 0; b < branches; ++b) x.branch_adjoint(b);
  x.bundle_adjoint_end();
}

// The staged adjoint of one control step (kernels/step/staged_adjoint.hpp) through `x`, which
// provides replay_begin(), replay_substep(s) (the staged substep's stages over tape slot s,
// run_staged_substep), replay_carry(s), replay_check(), adjoint_begin(), per substep (last to
// first) the adjoint stages over slot s, and adjoint_end(). The adjoint stages of a substep:
//   the Euler family: adjoint_state(s), then with constraints adjoint_hessian(s),
//     adjoint_solve(s), adjoint_rows(s), adjoint_pairs(s, routine, first, count) (with contacts,
//     one call per routine as narrow()) and adjoint_collision(s); last adjoint_finish(s);
//   the Impulse model: impulse_adjoint_begin(s), impulse_adjoint_solve(s),
//     impulse_adjoint_delassus(s), impulse_adjoint_rows(s), the pairs, adjoint_collision(s),
//     impulse_adjoint_finish(s);
//   the Runge–Kutta methods: run_staged_rk_adjoint_substep below.
// With `gradient_model` (contacts from distance: the adjoint differentiates a second contact
// model), each substep's adjoint stages are preceded by gradient_restore(s) and
// gradient_substep(s) (the staged substep's stages in that model over slot s).
template <class Exec>
void run_staged_adjoint_pairs(Exec& x, const PairGroups& g, int s, int round = -1) {
  for (int r = 0; r < kern::kPairRoutines; ++r)
    if (g.count(r) > 0)
      x.adjoint_pairs(s, r, g.begin[static_cast<std::size_t>(r)], g.count(r), round);
}

// The adjoint of a dynamics evaluation's constraint forces (with constraints), over slot s in
// `round` (-1: every environment; else the Runge–Kutta round: the environments with an accepted
// step of that index).
template <class Exec>
void run_staged_adjoint_constraints(Exec& x, const PairGroups& g, const StagedPlan& plan, int s,
                                    int round = -1) {
  if (!plan.constraints) return;
  x.adjoint_hessian(s, round);
  x.adjoint_solve(s, round);
  x.adjoint_rows(s, round);
  if (plan.contacts) run_staged_adjoint_pairs(x, g, s, round);
  x.adjoint_collision(s, round);
}

// The Runge–Kutta substep's adjoint over slot s (kernels/step/staged_adjoint.hpp): per round
// n = plan.rk_steps - 1 .. 0, rk_adjoint_step_begin(s, n), per stage i rk_adjoint_evaluate(s) (the
// staged step's evaluation stages over slot s for the environments it marks) and
// rk_adjoint_record(s, n, i); with event gradients rk_adjoint_event_begin(s, n) and three
// evaluations, each followed by rk_adjoint_event_end(s, n), rk_adjoint_event_start(s, n) and
// rk_adjoint_event_finish(s, n); rk_adjoint_output(s, n); then per used stage i (last to first)
// rk_adjoint_evaluate(s), rk_adjoint_stage_begin(s, n, i), the constraint forces' adjoint stages,
// adjoint_finish(s, n) and rk_adjoint_stage_end(s, n, i).
template <class Exec>
void run_staged_rk_adjoint_substep(Exec& x, const PairGroups& g, const StagedPlan& plan, int s) {
  const kern::RkTableau t = kern::rk_tableau(plan.rk_integrator);
  for (int n = plan.rk_steps - 1; n >= 0; --n) {
    x.rk_adjoint_step_begin(s, n);
    for (int i = 0; i < t.stages; ++i) {
      x.rk_adjoint_evaluate(s);
      x.rk_adjoint_record(s, n, i);
    }
    if (plan.rk_event_gradients) {
      x.rk_adjoint_event_begin(s, n);
      x.rk_adjoint_evaluate(s);
      x.rk_adjoint_event_end(s, n);
      x.rk_adjoint_evaluate(s);
      x.rk_adjoint_event_start(s, n);
      x.rk_adjoint_evaluate(s);
      x.rk_adjoint_event_finish(s, n);
    }
    x.rk_adjoint_output(s, n);
    for (int i = t.stages - 1; i >= 0; --i) {
      if (!kern::rk_stage_used(t, i)) continue;
      x.rk_adjoint_evaluate(s);
      x.rk_adjoint_stage_begin(s, n, i);
      run_staged_adjoint_constraints(x, g, plan, s, n);
      x.adjoint_finish(s, n);
      x.rk_adjoint_stage_end(s, n, i);
    }
  }
}

template <class Exec>
void run_staged_adjoint_step(Exec& x, const PairGroups& g, const StagedPlan& plan, int substeps,
                             bool gradient_model = false) {
  x.replay_begin();
  for (int s = 0; s < substeps; ++s) {
    x.replay_substep(s);
    if (s + 1 < substeps) x.replay_carry(s);
  }
  x.replay_check();
  x.adjoint_begin();
  for (int s = substeps - 1; s >= 0; --s) {
    if (gradient_model) {
      x.gradient_restore(s);
      x.gradient_substep(s);
    }
    if (plan.rk_evaluations > 0) {
      run_staged_rk_adjoint_substep(x, g, plan, s);
      continue;
    }
    if (plan.impulse) {
      x.impulse_adjoint_begin(s);
      x.impulse_adjoint_solve(s);
      x.impulse_adjoint_delassus(s);
      x.impulse_adjoint_rows(s);
      if (plan.contacts) run_staged_adjoint_pairs(x, g, s);
      x.adjoint_collision(s, -1);
      x.impulse_adjoint_finish(s);
      continue;
    }
    x.adjoint_state(s);
    run_staged_adjoint_constraints(x, g, plan, s);
    x.adjoint_finish(s, -1);
  }
  x.adjoint_end();
}

}  // namespace stiffgrad
