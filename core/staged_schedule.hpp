// Host side of the staged control step (kernels/step/staged_step.hpp): the candidate pairs
// grouped by narrow-phase routine, and the order of the stages. The CUDA backend launches one
// kernel per stage in this order (backends/cuda/staged_step.cuh); the host emulation test
// (tests/test_staged_step.cpp) runs the same stages over the device's workspace layout.
#pragma once

#include <array>
#include <vector>

#include "kernels/collision/collision.hpp"
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

// One substep of the staged pipeline through `x`, which provides smooth(),
// narrow(routine, first, count) (the pairs groups.pairs[first .. first + count)),
// constraint_rows(), constraint_solve() and constraint_finish(); with the Impulse model
// (`impulse`, kern::staged_step_is_impulse), impulse_half_step() and impulse_smooth() in place of
// smooth() and impulse_rows(), impulse_solve() and impulse_finish() in place of the constraint
// stages. Pairs without a routine (kRoutineNone: never compiled into a model with constraints,
// kept for safety) go through the run-time dispatch.
template <class Exec>
void run_staged_substep(Exec& x, const PairGroups& g, bool contact_enabled, bool impulse) {
  if (impulse) {
    x.impulse_half_step();
    x.impulse_smooth();
  } else {
    x.smooth();
  }
  if (contact_enabled)
    for (int r = 0; r < kern::kPairRoutines; ++r)
      if (g.count(r) > 0) x.narrow(r, g.begin[static_cast<std::size_t>(r)], g.count(r));
  if (impulse) {
    x.impulse_rows();
    x.impulse_solve();
    x.impulse_finish();
  } else {
    x.constraint_rows();
    x.constraint_solve();
    x.constraint_finish();
  }
}

// One control step of the staged pipeline: x.begin(), the substeps (run_staged_substep), x.end().
template <class Exec>
void run_staged_control_step(Exec& x, const PairGroups& g, bool contact_enabled, bool impulse, int substeps) {
  x.begin();
  for (int s = 0; s < substeps; ++s) run_staged_substep(x, g, contact_enabled, impulse);
  x.end();
}

// The contacts at the state alone (a bundle's start, kern::bundle_start_from_contacts) through
// `x`, which provides contacts_begin(), narrow() as above and contacts_gather().
template <class Exec>
void run_staged_contact_search(Exec& x, const PairGroups& g, bool contact_enabled) {
  x.contacts_begin();
  if (contact_enabled)
    for (int r = 0; r < kern::kPairRoutines; ++r)
      if (g.count(r) > 0) x.narrow(r, g.begin[static_cast<std::size_t>(r)], g.count(r));
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
// with soft constraints adjoint_state(s), adjoint_hessian(s), adjoint_solve(s), adjoint_rows(s);
// with the Impulse
// model (`impulse`) impulse_adjoint_begin(s), impulse_adjoint_solve(s),
// impulse_adjoint_delassus(s), impulse_adjoint_rows(s); then adjoint_pairs(s, routine, first,
// count) (with contacts, one call per routine as narrow()) and adjoint_collision(s); last
// adjoint_finish(s), or impulse_adjoint_finish(s). With `gradient_model` (contacts from distance:
// the adjoint differentiates a second contact model), each substep's adjoint stages are preceded
// by gradient_restore(s) and gradient_substep(s) (the staged substep's stages in that model over
// slot s).
template <class Exec>
void run_staged_adjoint_step(Exec& x, const PairGroups& g, bool contact_enabled, bool impulse,
                             int substeps, bool gradient_model = false) {
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
    if (impulse) {
      x.impulse_adjoint_begin(s);
      x.impulse_adjoint_solve(s);
      x.impulse_adjoint_delassus(s);
      x.impulse_adjoint_rows(s);
    } else {
      x.adjoint_state(s);
      x.adjoint_hessian(s);
      x.adjoint_solve(s);
      x.adjoint_rows(s);
    }
    if (contact_enabled)
      for (int r = 0; r < kern::kPairRoutines; ++r)
        if (g.count(r) > 0) x.adjoint_pairs(s, r, g.begin[static_cast<std::size_t>(r)], g.count(r));
    x.adjoint_collision(s);
    if (impulse) x.impulse_adjoint_finish(s);
    else x.adjoint_finish(s);
  }
  x.adjoint_end();
}

}  // namespace stiffgrad
