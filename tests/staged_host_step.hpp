// Host emulation of the CUDA backend's StagedStep (backends/cuda/staged_step.cuh): the staged
// control step, one substep over a given workspace (the staged adjoint's replay into a tape
// slot) and the contact search alone, run through core/staged_schedule.hpp's schedules over the
// device's layout (every Data and the pair slots interleaved across environments,
// kern::Strided{nenv}), item by item as the stage kernels' threads would, with the solves on a
// team that takes its items in a warp's lanes' order (last lane first). For the tests of the
// staged step (tests/test_staged_step.cpp) and of what runs it (tests/staged_host_adjoint.hpp,
// tests/test_staged_bundle.cpp).
#pragma once

#include <limits>
#include <vector>

#include "core/staged_schedule.hpp"
#include "kernels/step/staged_step.hpp"
#include "last_lane_first_team.hpp"

namespace sgtest {

template <class Real>
class HostStagedStep {
 public:
  using V = stiffgrad::kern::View<Real, stiffgrad::kern::Strided>;
  using D = stiffgrad::kern::Data<Real, stiffgrad::kern::Strided>;

  // `workspace`: DataLayout::size x nenv Reals, the environments' Data (the backend's workspace).
  HostStagedStep(const stiffgrad::Model& model, const stiffgrad::kern::ModelView<Real>& m,
                 const stiffgrad::kern::DataLayout& layout, int nenv, Real* workspace)
      : m_(m),
        layout_(layout),
        nenv_(nenv),
        workspace_(workspace),
        groups_(stiffgrad::make_pair_groups(model)),
        plan_(stiffgrad::make_staged_plan(m)),
        rk_(static_cast<std::size_t>(nenv)),
        slots_(static_cast<std::size_t>(stiffgrad::kern::pair_slots_size(m)) * nenv + 1),
        raised_(static_cast<std::size_t>(nenv), 0) {
    for (auto& c : rk_) c.phase = stiffgrad::kern::kRkDone;
  }

  // StagedStep::launch: one control step of `substeps` substeps of every environment not flagged
  // in skip (null: none) and not non-finite, over environment-minor arrays of stride nenv.
  void step(Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* stats, int* status,
            const int* skip, int substeps) {
    const Args a{qpos, qvel, ctrl, warm, stats, workspace_, status, skip, true};
    Exec x{*this, a};
    stiffgrad::run_staged_control_step(x, groups_, plan_, substeps);
  }

  // StagedStep::launch_substep: the stages of one substep over `workspace` (DataLayout::size x
  // nenv), every environment whatever its status; `stats` (kContactStats x nenv) is scratch.
  void substep(Real* workspace, Real* stats) {
    const Args a{nullptr, nullptr, nullptr, nullptr, stats, workspace, nullptr, nullptr, true};
    Exec x{*this, a};
    stiffgrad::run_staged_substep(x, groups_, plan_);
  }

  // StagedStep::launch_evaluation: one Runge–Kutta evaluation up to its solve over `workspace`
  // for the environments whose controller (rk_controls()) is not done.
  void evaluation(Real* workspace) {
    const Args a{nullptr, nullptr, nullptr, nullptr, nullptr, workspace, nullptr, nullptr, true};
    Exec x{*this, a};
    stiffgrad::run_staged_evaluation(x, groups_, plan_);
  }
  stiffgrad::kern::RkControl* rk_controls() { return rk_.data(); }

  // StagedStep::launch_contact_search: the kinematics and contacts at (qpos, qvel) of every
  // environment not flagged in skip, into its Data.
  void contact_search(Real* qpos, Real* qvel, const int* skip) {
    // the contact search reads no controller (the device's StagedArgs::rk is null there)
    const Args a{qpos, qvel, nullptr, nullptr, nullptr, workspace_, nullptr, skip, false};
    Exec x{*this, a};
    stiffgrad::run_staged_contact_search(x, groups_, m_.contact_enabled != 0);
  }

  D data(int e) const { return bind(workspace_, e); }
  const stiffgrad::PairGroups& groups() const { return groups_; }
  const stiffgrad::StagedPlan& plan() const { return plan_; }
  const stiffgrad::kern::RkControl& controller(int e) const { return rk_[e]; }

  // launches of the narrow stage (one per routine and substep), of the Impulse model's rows
  // stage, and the contacts each routine's narrow items found
  int narrow_calls = 0, impulse_calls = 0;
  // Runge–Kutta: the dynamics evaluations run per environment (rk_finish items), and the
  // substeps after which some environment's controller was not done (none may be)
  std::vector<long> evaluations;
  int unfinished_substeps = 0;
  std::vector<long> found = std::vector<long>(stiffgrad::kern::kPairRoutines, 0);
  // The Impulse solve's scratch per environment in Reals (StagedArgs::solve_scratch_reals: the
  // block's shared memory of the CUDA stage); the solves run in it and in the workspace, and the
  // working-set size of each (kern::impulse_solve_set_size of its live rows)
  int solve_scratch_reals = 0;
  long scratch_solves = 0, in_place_solves = 0;
  std::vector<int> solve_set_sizes;

 private:
  struct Args {
    Real *qpos, *qvel, *ctrl, *warm, *stats, *workspace;
    int* status;
    const int* skip;
    bool rk_masked;  // the Runge–Kutta controllers mask the evaluation stages (StagedArgs::rk)
  };
  D bind(Real* workspace, int e) const {
    return D::bind(V{workspace + e, stiffgrad::kern::Strided{nenv_}}, layout_);
  }
  // The stage kernels' threads: a live environment (staged::stage_env_if_live).
  struct Exec {
    HostStagedStep& s;
    const Args& a;
    V at(Real* base, int e) const { return V{base + e, stiffgrad::kern::Strided{s.nenv_}}; }
    bool live(int e) const {
      if (a.skip && a.skip[e]) return false;
      return !(a.status && (a.status[e] & stiffgrad::kern::kEnvNonFinite));
    }
    // an evaluation stage of a Runge–Kutta substep skips the environments whose controller is
    // done (staged::rk_done)
    bool evaluating(int e) const {
      return !a.rk_masked || s.plan_.rk_evaluations == 0 ||
             s.rk_[e].phase != stiffgrad::kern::kRkDone;
    }
    template <class F>
    void each(F&& f) const {
      for (int e = 0; e < s.nenv_; ++e)
        if (live(e)) f(e, s.bind(a.workspace, e));
    }
    template <class F>
    void each_evaluating(F&& f) const {
      each([&](int e, D d) {
        if (evaluating(e)) f(e, d);
      });
    }
    V slots(int e) const { return at(s.slots_.data(), e); }
    LastLaneFirstTeam team() const { return LastLaneFirstTeam{{s.m_.team_width}}; }
    void begin() const {
      each([&](int e, D d) {
        s.raised_[e] = 0;
        stiffgrad::kern::control_step_begin(s.m_, at(a.qpos, e), at(a.qvel, e), at(a.ctrl, e),
                                            at(a.warm, e), d, a.status + e, at(a.stats, e));
      });
    }
    void smooth() const {
      each([&](int, D d) { stiffgrad::kern::staged_smooth(s.m_, d); });
    }
    void narrow(int routine, int first, int count) const {
      ++s.narrow_calls;
      stiffgrad::kern::with_pair_routine(routine, [&](auto r) {
        constexpr int R = decltype(r)::value;
        for (int k = 0; k < count; ++k)  // blockIdx.y
          each_evaluating([&](int e, D d) {
            const int pair = s.groups_.pairs[first + k];
            stiffgrad::kern::staged_narrow<R>(s.m_, d, pair, slots(e));
            s.found[routine] += static_cast<long>(slots(e)[pair]);
          });
      });
    }
    void constraint_rows() const {
      each_evaluating([&](int e, D d) {
        s.raised_[e] |= stiffgrad::kern::staged_constraint_rows(s.m_, d, slots(e));
      });
    }
    void constraint_solve() const {
      each_evaluating([&](int, D d) { stiffgrad::kern::constraint_solve(team(), s.m_, d); });
    }
    void constraint_finish() const {
      each([&](int e, D d) { stiffgrad::kern::staged_constraint_finish(s.m_, d, at(a.stats, e)); });
    }
    void rk_begin() const {
      s.evaluations.resize(static_cast<std::size_t>(s.nenv_), 0);
      // a substep's evaluations are over when the next begins (or the step ends)
      check_controllers_done();
      each([&](int e, D d) { stiffgrad::kern::rk_substep_begin(s.m_, d, s.rk_[e]); });
    }
    void rk_smooth() const {
      each_evaluating([&](int, D d) { stiffgrad::kern::staged_rk_smooth(s.m_, d); });
    }
    void rk_finish() const {
      each_evaluating([&](int e, D d) {
        ++s.evaluations[e];
        s.raised_[e] |= stiffgrad::kern::staged_rk_finish(s.m_, d, s.rk_[e], at(a.stats, e));
      });
    }
    void check_controllers_done() const {
      bool all = true;
      each([&](int e, D) { all = all && s.rk_[e].phase == stiffgrad::kern::kRkDone; });
      if (!all) ++s.unfinished_substeps;
    }
    void impulse_half_step() const {
      each([&](int, D d) { stiffgrad::kern::impulse_substep_half_step(s.m_, d); });
    }
    void impulse_smooth() const {
      each([&](int, D d) { stiffgrad::kern::staged_impulse_smooth(s.m_, d); });
    }
    void impulse_rows() const {
      ++s.impulse_calls;
      each([&](int e, D d) {
        s.raised_[e] |= stiffgrad::kern::staged_impulse_rows(s.m_, d, slots(e));
      });
    }
    // a warp's share of its block's shared memory: solve_scratch_reals (0: none, every solve in the
    // workspace), one at a time here, filled with NaN as shared memory holds garbage: a value read
    // before the solve writes it would show
    void impulse_solve() const {
      each([&](int, D d) {
        const int n = stiffgrad::kern::sg_int(d.nefc()[0]);
        if (stiffgrad::kern::impulse_solve_fits(n, s.m_.nv, s.solve_scratch_reals))
          ++s.scratch_solves;
        else
          ++s.in_place_solves;
        s.solve_set_sizes.push_back(stiffgrad::kern::impulse_solve_set_size(n, s.m_.nv));
        s.scratch_.assign(static_cast<std::size_t>(s.solve_scratch_reals) + 1,
                          std::numeric_limits<Real>::quiet_NaN());
        stiffgrad::kern::impulse_substep_solve_in(
            team(), s.m_, d,
            stiffgrad::kern::View<Real, stiffgrad::kern::Contiguous>{s.scratch_.data()},
            s.solve_scratch_reals);
      });
    }
    void impulse_finish() const {
      each([&](int e, D d) { stiffgrad::kern::staged_impulse_finish(s.m_, d, at(a.stats, e)); });
    }
    void end() const {
      if (s.plan_.rk_evaluations > 0) check_controllers_done();
      each([&](int e, D d) {
        stiffgrad::kern::control_step_end(s.m_, d, at(a.qpos, e), at(a.qvel, e), at(a.warm, e),
                                          s.raised_[e], a.status + e);
      });
    }
    void contacts_begin() const {
      each([&](int e, D d) {
        stiffgrad::kern::staged_contacts_begin(s.m_, at(a.qpos, e), at(a.qvel, e), d);
      });
    }
    void contacts_gather() const {
      each([&](int e, D d) { stiffgrad::kern::staged_gather_contacts(s.m_, d, slots(e)); });
    }
  };

  stiffgrad::kern::ModelView<Real> m_;
  stiffgrad::kern::DataLayout layout_;
  int nenv_;
  Real* workspace_;
  stiffgrad::PairGroups groups_;
  stiffgrad::StagedPlan plan_;
  std::vector<stiffgrad::kern::RkControl> rk_;
  std::vector<Real> slots_;
  std::vector<int> raised_;
  std::vector<Real> scratch_;
};

}  // namespace sgtest
