// Host emulation of the CUDA backend's StagedStep (backends/cuda/staged_step.cuh): the staged
// control step and the contact search alone, run through core/staged_schedule.hpp's schedules
// over the device's layout (every Data and the pair slots interleaved across environments,
// kern::Strided{nenv}), item by item as the stage kernels' threads would, with the solves on a
// team that takes its items in a warp's lanes' order (last lane first). For tests of what runs
// those stages (tests/test_staged_bundle.cpp).
#pragma once

#include <vector>

#include "core/staged_schedule.hpp"
#include "kernels/step/staged_step.hpp"
#include "last_lane_first_team.hpp"

namespace sgtest {

template <class Real>
class HostStagedStep {
 public:
  using V = stiffgrad::kern::View<Real, stiffgrad::kern::Strided>;

  // `workspace`: DataLayout::size x nenv Reals, the environments' Data (the backend's workspace).
  HostStagedStep(const stiffgrad::Model& model, const stiffgrad::kern::ModelView<Real>& m,
                 const stiffgrad::kern::DataLayout& layout, int nenv, Real* workspace)
      : m_(m),
        layout_(layout),
        nenv_(nenv),
        workspace_(workspace),
        groups_(stiffgrad::make_pair_groups(model)),
        slots_(static_cast<std::size_t>(stiffgrad::kern::pair_slots_size(m)) * nenv + 1),
        raised_(static_cast<std::size_t>(nenv), 0) {}

  // StagedStep::launch: one control step of `substeps` substeps of every environment not flagged
  // in skip (null: none), over environment-minor arrays of stride nenv.
  void step(Real* qpos, Real* qvel, Real* ctrl, Real* warm, Real* stats, int* status,
            const int* skip, int substeps) {
    Args a{qpos, qvel, ctrl, warm, stats, status, skip};
    Exec x{*this, a};
    stiffgrad::run_staged_control_step(x, groups_, m_.contact_enabled != 0,
                                       stiffgrad::kern::staged_step_is_impulse(m_), substeps);
  }

  // StagedStep::launch_contact_search: the kinematics and contacts at (qpos, qvel) of every
  // environment not flagged in skip, into its Data.
  void contact_search(Real* qpos, Real* qvel, const int* skip) {
    Args a{qpos, qvel, nullptr, nullptr, nullptr, nullptr, skip};
    Exec x{*this, a};
    stiffgrad::run_staged_contact_search(x, groups_, m_.contact_enabled != 0);
  }

  stiffgrad::kern::Data<Real, stiffgrad::kern::Strided> data(int e) const {
    return stiffgrad::kern::Data<Real, stiffgrad::kern::Strided>::bind(
        V{workspace_ + e, stiffgrad::kern::Strided{nenv_}}, layout_);
  }

 private:
  struct Args {
    Real *qpos, *qvel, *ctrl, *warm, *stats;
    int* status;
    const int* skip;
  };
  // The stage kernels' threads: a live environment (staged::stage_env_if_live).
  struct Exec {
    HostStagedStep& s;
    const Args& a;
    V at(Real* base, int e) const { return V{base + e, stiffgrad::kern::Strided{s.nenv_}}; }
    bool live(int e) const {
      if (a.skip && a.skip[e]) return false;
      return !(a.status && (a.status[e] & stiffgrad::kern::kEnvNonFinite));
    }
    template <class F>
    void each(F&& f) const {
      for (int e = 0; e < s.nenv_; ++e)
        if (live(e)) f(e);
    }
    V slots(int e) const { return at(s.slots_.data(), e); }
    LastLaneFirstTeam team() const { return LastLaneFirstTeam{{s.m_.team_width}}; }
    void begin() const {
      each([&](int e) {
        s.raised_[e] = 0;
        stiffgrad::kern::control_step_begin(s.m_, at(a.qpos, e), at(a.qvel, e), at(a.ctrl, e),
                                            at(a.warm, e), s.data(e), a.status + e, at(a.stats, e));
      });
    }
    void smooth() const {
      each([&](int e) { stiffgrad::kern::staged_smooth(s.m_, s.data(e)); });
    }
    void narrow(int routine, int first, int count) const {
      stiffgrad::kern::with_pair_routine(routine, [&](auto r) {
        constexpr int R = decltype(r)::value;
        for (int k = 0; k < count; ++k)  // blockIdx.y
          each([&](int e) {
            stiffgrad::kern::staged_narrow<R>(s.m_, s.data(e), s.groups_.pairs[first + k],
                                              slots(e));
          });
      });
    }
    void constraint_rows() const {
      each([&](int e) {
        s.raised_[e] |= stiffgrad::kern::staged_constraint_rows(s.m_, s.data(e), slots(e));
      });
    }
    void constraint_solve() const {
      each([&](int e) { stiffgrad::kern::constraint_solve(team(), s.m_, s.data(e)); });
    }
    void constraint_finish() const {
      each([&](int e) {
        stiffgrad::kern::staged_constraint_finish(s.m_, s.data(e), at(a.stats, e));
      });
    }
    void impulse_half_step() const {
      each([&](int e) { stiffgrad::kern::impulse_substep_half_step(s.m_, s.data(e)); });
    }
    void impulse_smooth() const {
      each([&](int e) { stiffgrad::kern::staged_impulse_smooth(s.m_, s.data(e)); });
    }
    void impulse_rows() const {
      each([&](int e) {
        s.raised_[e] |= stiffgrad::kern::staged_impulse_rows(s.m_, s.data(e), slots(e));
      });
    }
    void impulse_solve() const {
      each([&](int e) { stiffgrad::kern::impulse_substep_solve(team(), s.m_, s.data(e)); });
    }
    void impulse_finish() const {
      each([&](int e) { stiffgrad::kern::staged_impulse_finish(s.m_, s.data(e), at(a.stats, e)); });
    }
    void end() const {
      each([&](int e) {
        stiffgrad::kern::control_step_end(s.m_, s.data(e), at(a.qpos, e), at(a.qvel, e),
                                          at(a.warm, e), s.raised_[e], a.status + e);
      });
    }
    void contacts_begin() const {
      each([&](int e) {
        stiffgrad::kern::staged_contacts_begin(s.m_, at(a.qpos, e), at(a.qvel, e), s.data(e));
      });
    }
    void contacts_gather() const {
      each([&](int e) { stiffgrad::kern::staged_gather_contacts(s.m_, s.data(e), slots(e)); });
    }
  };

  stiffgrad::kern::ModelView<Real> m_;
  stiffgrad::kern::DataLayout layout_;
  int nenv_;
  Real* workspace_;
  stiffgrad::PairGroups groups_;
  std::vector<Real> slots_;
  std::vector<int> raised_;
};

}  // namespace sgtest
