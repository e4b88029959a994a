// Host emulation of the CUDA backend's StagedAdjoint (backends/cuda/staged_adjoint.cuh): one
// control step's adjoint through core/staged_schedule.hpp's run_staged_adjoint_step over the
// device's layout (kern::Strided{nenv}), item by item as the stage kernels' threads would: the
// replay's stages (the staged step's substeps over the tape) for every environment, the adjoint's
// stages for those not skipped, the solves on a team that takes its items in a warp's lanes'
// order (last lane first), the pairs stage's passes last first; the replay's substeps through
// sgtest::HostStagedStep::substep, as the device's through StagedStep::launch_substep. For tests
// of the staged adjoint (tests/test_staged_adjoint.cpp) and of what runs it
// (tests/test_staged_bundle.cpp).
#pragma once

#include <vector>

#include "core/staged_schedule.hpp"
#include "kernels/step/staged_adjoint.hpp"
#include "last_lane_first_team.hpp"
#include "staged_host_step.hpp"

namespace sgtest {

template <class Real>
class HostStagedAdjoint {
 public:
  using V = stiffgrad::kern::View<Real, stiffgrad::kern::Strided>;
  using D = stiffgrad::kern::Data<Real, stiffgrad::kern::Strided>;

  // StagedAdjointArgs' per-call pointers (environment-minor, stride nenv).
  struct Args {
    const Real *q0, *v0, *u, *w0;  // the checkpoint at the step's start, its control and warm start
    const Real *q1, *v1;           // the next checkpoint (the replay's check)
    Real *adj_q, *adj_v;           // in: the adjoint of the state after the step; out: before
    Real* adj_u;                   // out: the control's adjoint
    const Real *dl_q, *dl_v;       // the loss gradient of the state at the step's start, or null
    const int* status;             // a non-finite environment's check is not counted
    int* replay_ok;                // cleared where the replay is not bitwise
    const char* skip;              // environments whose step is differentiated elsewhere, or null
  };

  // m: the simulated model, mg: the differentiated one (m, or with contacts from distance the
  // second contact model), S substeps per control step.
  HostStagedAdjoint(const stiffgrad::Model& model, const stiffgrad::kern::ModelView<Real>& m,
                    const stiffgrad::kern::ModelView<Real>& mg,
                    const stiffgrad::kern::DataLayout& layout, int nenv, int S)
      : m_(m),
        mg_(mg),
        layout_(layout),
        nenv_(nenv),
        S_(S),
        groups_(stiffgrad::make_pair_groups(model)),
        plan_(stiffgrad::make_staged_plan(mg)),
        size_(static_cast<std::size_t>(layout.size)),
        tape_(S * size_ * nenv),
        adj_ws_(size_ * nenv),
        replay_(static_cast<std::size_t>(stiffgrad::kern::replay_size(m, S)) * nenv),
        stats_(stiffgrad::kern::kContactStats * nenv),
        pair_slots_(static_cast<std::size_t>(stiffgrad::kern::adjoint_pair_slots_size(mg)) * nenv +
                    1),
        step_(model, m, layout, nenv, nullptr),
        gradient_step_(model, mg, layout, nenv, nullptr) {}

  // StagedAdjoint::launch: the adjoint of one control step.
  void step(const Args& a) {
    Exec x{*this, a};
    stiffgrad::run_staged_adjoint_step(x, groups_, plan_, S_, mg_.cfd != 0);
  }

  const stiffgrad::PairGroups& groups() const { return groups_; }
  // calls of the adjoint's first stage per substep, of the gradient-model substeps, of the pairs
  // stage
  int stage_calls = 0, gradient_calls = 0, pair_calls = 0;
  // Runge–Kutta: the rounds' stage-adjoint items run (rk_adjoint_stage_end per environment)
  long rk_stage_adjoints = 0;
  long rk_events = 0;  // located events whose saltation the rounds applied (environment-steps)

 private:
  Real* slot_base(int s) { return tape_.data() + s * size_ * nenv_; }  // tape slot s's workspace
  D slot(int s, int e) {
    return D::bind(V{slot_base(s) + e, stiffgrad::kern::Strided{nenv_}}, layout_);
  }
  V at(std::vector<Real>& v, int e) { return V{v.data() + e, stiffgrad::kern::Strided{nenv_}}; }
  V at(const Real* p, int e) const {
    return V{const_cast<Real*>(p) + e, stiffgrad::kern::Strided{nenv_}};
  }
  D adata(int e) { return D::bind(at(adj_ws_, e), layout_); }
  LastLaneFirstTeam team() const { return LastLaneFirstTeam{{m_.team_width}}; }

  struct Exec {
    HostStagedAdjoint& h;
    const Args& a;
    bool skipped(int e) const { return a.skip != nullptr && a.skip[e] != 0; }
    template <class F>
    void each(F&& f) const {  // the adjoint's stages: environments not skipped
      for (int e = 0; e < h.nenv_; ++e)
        if (!skipped(e)) f(e);
    }
    // a stage of Runge–Kutta round `round` (-1: none) of substep s: the environments with an
    // accepted step of that index (staged_adjoint::outside_round)
    template <class F>
    void each_in(int s, int round, F&& f) const {
      each([&](int e) {
        if (round < 0 || stiffgrad::kern::staged_rk_adjoint_active(h.slot(s, e), round)) f(e);
      });
    }
    // the staged step that evaluates the differentiated model's dynamics
    HostStagedStep<Real>& evaluator() const { return h.mg_.cfd ? h.gradient_step_ : h.step_; }
    bool in_round(int s, int e, int n) const {
      return !skipped(e) && stiffgrad::kern::staged_rk_adjoint_active(h.slot(s, e), n);
    }
    // the round's begin, the event's begin and the output: every environment, as replay stages
    void rk_adjoint_step_begin(int s, int n) const {
      stiffgrad::kern::RkControl* rk = evaluator().rk_controls();
      for (int e = 0; e < h.nenv_; ++e) {
        const bool active = in_round(s, e, n);
        rk[e].phase = active ? stiffgrad::kern::kRkStage : stiffgrad::kern::kRkDone;
        if (active)
          stiffgrad::kern::staged_rk_adjoint_step_begin(mg(), h.slot(s, e), h.adata(e), n, rk[e]);
      }
    }
    void rk_adjoint_evaluate(int s) const { evaluator().evaluation(h.slot_base(s)); }
    void rk_adjoint_record(int s, int n, int i) const {
      stiffgrad::kern::RkControl* rk = evaluator().rk_controls();
      each_in(s, n, [&](int e) {
        stiffgrad::kern::staged_rk_adjoint_record(mg(), h.slot(s, e), n, i, rk[e]);
      });
    }
    void rk_adjoint_event_begin(int s, int n) const {
      stiffgrad::kern::RkControl* rk = evaluator().rk_controls();
      for (int e = 0; e < h.nenv_; ++e) {
        const bool located = in_round(s, e, n) && stiffgrad::kern::staged_rk_adjoint_located(
                                                      mg(), h.slot(s, e), n, rk[e]);
        rk[e].phase = located ? stiffgrad::kern::kRkStage : stiffgrad::kern::kRkDone;
        if (located) {
          ++h.rk_events;
          stiffgrad::kern::staged_rk_adjoint_event_begin(mg(), h.slot(s, e), rk[e]);
        }
      }
    }
    template <class F>
    void each_located(int s, int n, F&& f) const {  // the environments the event's begin marked
      stiffgrad::kern::RkControl* rk = evaluator().rk_controls();
      each_in(s, n, [&](int e) {
        if (rk[e].phase == stiffgrad::kern::kRkStage) f(e, rk[e]);
      });
    }
    void rk_adjoint_event_end(int s, int n) const {
      each_located(s, n, [&](int e, stiffgrad::kern::RkControl& c) {
        stiffgrad::kern::staged_rk_adjoint_event_end(mg(), h.slot(s, e), c);
      });
    }
    void rk_adjoint_event_start(int s, int n) const {
      each_located(s, n, [&](int e, stiffgrad::kern::RkControl& c) {
        stiffgrad::kern::staged_rk_adjoint_event_start(mg(), h.slot(s, e), c);
      });
    }
    void rk_adjoint_event_finish(int s, int n) const {
      each_located(s, n, [&](int e, stiffgrad::kern::RkControl& c) {
        stiffgrad::kern::staged_rk_adjoint_event_finish(mg(), h.slot(s, e), h.adata(e), c);
      });
    }
    void rk_adjoint_output(int s, int n) const {
      stiffgrad::kern::RkControl* rk = evaluator().rk_controls();
      for (int e = 0; e < h.nenv_; ++e) {
        const bool active = in_round(s, e, n);
        rk[e].phase = active ? stiffgrad::kern::kRkStage : stiffgrad::kern::kRkDone;
        if (active) stiffgrad::kern::staged_rk_adjoint_output(mg(), h.slot(s, e), h.adata(e), n);
      }
    }
    void rk_adjoint_stage_begin(int s, int n, int i) const {
      ++h.stage_calls;
      each_in(s, n, [&](int e) {
        stiffgrad::kern::staged_rk_adjoint_stage_begin(mg(), h.layout_, h.slot(s, e), h.adata(e),
                                                       h.at(h.adj_ws_, e), i);
      });
    }
    void rk_adjoint_stage_end(int s, int n, int i) const {
      each_in(s, n, [&](int e) {
        ++h.rk_stage_adjoints;
        stiffgrad::kern::staged_rk_adjoint_stage_end(mg(), h.slot(s, e), h.adata(e), n, i);
      });
    }
    const stiffgrad::kern::ModelView<Real>& mg() const { return h.mg_; }
    void replay_begin() const {
      for (int e = 0; e < h.nenv_; ++e)
        stiffgrad::kern::staged_replay_begin(h.m_, h.at(a.q0, e), h.at(a.v0, e), h.at(a.u, e),
                                             h.at(a.w0, e), h.slot(0, e), h.at(h.replay_, e));
    }
    void replay_substep(int s) const {  // StagedStep::launch_substep over tape slot s
      h.step_.substep(h.slot_base(s), h.stats_.data());
    }
    void gradient_restore(int s) const {
      each([&](int e) {
        stiffgrad::kern::staged_gradient_restore(mg(), h.at(h.replay_, e), s, h.slot(s, e));
      });
    }
    void gradient_substep(int s) const {  // the gradient model's StagedStep, over tape slot s
      ++h.gradient_calls;
      h.gradient_step_.substep(h.slot_base(s), h.stats_.data());
    }
    void replay_carry(int s) const {
      for (int e = 0; e < h.nenv_; ++e)
        stiffgrad::kern::staged_replay_carry(h.m_, h.slot(s, e), h.slot(s + 1, e),
                                             h.at(h.replay_, e), s);
    }
    void replay_check() const {
      each([&](int e) {
        if (!stiffgrad::kern::staged_replay_matches(h.m_, h.slot(h.S_ - 1, e), h.at(a.q1, e),
                                                    h.at(a.v1, e)) &&
            a.status[e] == stiffgrad::kern::kEnvOk)
          a.replay_ok[e] = 0;
      });
    }
    void adjoint_begin() const {
      each([&](int e) {
        stiffgrad::kern::staged_adjoint_begin(mg(), h.at(a.adj_q, e), h.at(a.adj_v, e), h.adata(e));
      });
    }
    void adjoint_state(int s) const {
      ++h.stage_calls;
      each([&](int e) {
        stiffgrad::kern::staged_adjoint_state(mg(), h.layout_, h.at(h.replay_, e), s, h.slot(s, e),
                                              h.adata(e), h.at(h.adj_ws_, e));
      });
    }
    void adjoint_hessian(int s, int round) const {
      each_in(s, round, [&](int e) {
        stiffgrad::kern::adj_constraint_solve_begin(h.team(), mg(), h.slot(s, e));
      });
    }
    void adjoint_solve(int s, int round) const {
      each_in(s, round, [&](int e) {
        stiffgrad::kern::adj_constraint_solve_end<true>(mg(), h.slot(s, e), h.adata(e));
      });
    }
    void adjoint_rows(int s, int round) const {
      each_in(s, round, [&](int e) {
        stiffgrad::kern::adj_constraint_forces_rows(mg(), h.slot(s, e), h.adata(e));
      });
    }
    void impulse_adjoint_begin(int s) const {
      ++h.stage_calls;
      each([&](int e) {
        stiffgrad::kern::adj_impulse_begin(mg(), h.layout_, h.slot(s, e), h.adata(e),
                                           h.at(h.adj_ws_, e));
      });
    }
    void impulse_adjoint_solve(int s) const {
      each([&](int e) { stiffgrad::kern::adj_impulse_solve_out(mg(), h.slot(s, e), h.adata(e)); });
    }
    void impulse_adjoint_delassus(int s) const {
      each([&](int e) { stiffgrad::kern::adj_impulse_delassus(mg(), h.slot(s, e), h.adata(e)); });
    }
    void impulse_adjoint_rows(int s) const {
      each([&](int e) { stiffgrad::kern::adj_impulse_rows(mg(), h.slot(s, e), h.adata(e)); });
    }
    void impulse_adjoint_finish(int s) const {
      each([&](int e) { stiffgrad::kern::adj_impulse_end(mg(), h.slot(s, e), h.adata(e)); });
    }
    void adjoint_pairs(int s, int routine, int first, int count, int round) const {
      ++h.pair_calls;
      stiffgrad::kern::with_pair_routine(routine, [&](auto r) {
        constexpr int R = decltype(r)::value;
        for (int chunk = stiffgrad::kern::pair_adjoint_chunks<Real>(R) - 1; chunk >= 0;
             --chunk)                      // blockIdx.z
          for (int k = 0; k < count; ++k)  // blockIdx.y
            each_in(s, round, [&](int e) {
              stiffgrad::kern::staged_adjoint_pair<R>(mg(), h.slot(s, e), h.adata(e),
                                                      h.groups_.pairs[first + k], chunk,
                                                      h.at(h.pair_slots_, e));
            });
      });
    }
    void adjoint_collision(int s, int round) const {
      each_in(s, round, [&](int e) {
        stiffgrad::kern::staged_adjoint_collision(mg(), h.slot(s, e), h.adata(e),
                                                  h.at(h.pair_slots_, e));
      });
    }
    void adjoint_finish(int s, int round) const {
      each_in(s, round, [&](int e) {
        stiffgrad::kern::staged_adjoint_finish(mg(), h.slot(s, e), h.adata(e));
      });
    }
    void adjoint_end() const {
      each([&](int e) {
        const V adj_q = h.at(a.adj_q, e), adj_v = h.at(a.adj_v, e);
        stiffgrad::kern::staged_adjoint_end(mg(), h.adata(e), adj_q, adj_v, h.at(a.adj_u, e));
        if (a.dl_q)
          for (int i = 0; i < h.m_.nq; ++i) adj_q[i] += a.dl_q[i * h.nenv_ + e];
        if (a.dl_v)
          for (int i = 0; i < h.m_.nv; ++i) adj_v[i] += a.dl_v[i * h.nenv_ + e];
      });
    }
  };

  stiffgrad::kern::ModelView<Real> m_, mg_;
  stiffgrad::kern::DataLayout layout_;
  int nenv_, S_;
  stiffgrad::PairGroups groups_;
  stiffgrad::StagedPlan plan_;
  std::size_t size_;
  std::vector<Real> tape_, adj_ws_, replay_, stats_, pair_slots_;
  HostStagedStep<Real> step_, gradient_step_;  // the replay's stages in m and in mg
};

}  // namespace sgtest
