// stiffgrad — candidate geom pairs in MuJoCo 2.2.2's contact order (facts §1).
//
// MuJoCo's mj_collision visits the body pairs its broadphase returns in ascending signature
// (b1+1)*2^16 + (b2+1), b1 < b2, merging the <pair>s (sorted by the same signature) in front of
// the first body pair whose signature is >= theirs. The broadphase only prunes by distance, so
// visiting every body pair gives a list in which each step's contacts appear in MuJoCo's order:
// the per-step culling (bounding spheres, planes) then drops entries without reordering.
#include "core/collision_pairs.hpp"

#include "kernels/collision/collision.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace stiffgrad {
namespace {

constexpr double kMinVal = 1e-15;  // mjMINVAL
constexpr double kMinMu = 1e-5;    // mjMINMU: every friction entry is clamped to it

int signature(int b1, int b2) { return ((b1 + 1) << 16) + (b2 + 1); }

struct Params {
  int condim;
  double friction[5], solref[2], solimp[5], margin, gap;
};

// Dynamic pair: mixes the two geoms' parameters (mj_collideGeoms, facts §1).
Params mix_geoms(const Model& m, int g1, int g2) {
  Params p{};
  p.margin = std::max(m.geom_margin[g1], m.geom_margin[g2]);
  p.gap = std::max(m.geom_gap[g1], m.geom_gap[g2]);
  double fr[3];
  if (m.geom_priority[g1] != m.geom_priority[g2]) {
    // The higher priority geom decides condim, friction, solref and solimp alone.
    const int g = m.geom_priority[g1] > m.geom_priority[g2] ? g1 : g2;
    p.condim = m.geom_condim[g];
    for (int i = 0; i < 3; ++i) fr[i] = m.geom_friction[3 * g + i];
    for (int i = 0; i < 2; ++i) p.solref[i] = m.geom_solref[2 * g + i];
    for (int i = 0; i < 5; ++i) p.solimp[i] = m.geom_solimp[5 * g + i];
  } else {
    p.condim = std::max(m.geom_condim[g1], m.geom_condim[g2]);
    for (int i = 0; i < 3; ++i) fr[i] = std::max(m.geom_friction[3 * g1 + i], m.geom_friction[3 * g2 + i]);
    const double s1 = m.geom_solmix[g1], s2 = m.geom_solmix[g2];
    double mix;
    if (s1 >= kMinVal && s2 >= kMinVal) mix = s1 / (s1 + s2);
    else if (s1 < kMinVal && s2 < kMinVal) mix = 0.5;
    else mix = s1 < kMinVal ? 0.0 : 1.0;
    // Standard solrefs (both time constants > 0) are mixed; direct ones take the minimum.
    const bool standard = m.geom_solref[2 * g1] > 0 && m.geom_solref[2 * g2] > 0;
    for (int i = 0; i < 2; ++i) {
      const double a = m.geom_solref[2 * g1 + i], b = m.geom_solref[2 * g2 + i];
      p.solref[i] = standard ? mix * a + (1 - mix) * b : std::min(a, b);
    }
    // MuJoCo computes mix*imp1 + (1-mix)*imp2 as a scale then an add: same rounding here.
    for (int i = 0; i < 5; ++i) {
      p.solimp[i] = m.geom_solimp[5 * g1 + i] * mix;
      p.solimp[i] += m.geom_solimp[5 * g2 + i] * (1 - mix);
    }
  }
  // 5-D friction: (slide, slide, torsion, roll, roll).
  const double f5[5] = {fr[0], fr[0], fr[1], fr[2], fr[2]};
  std::copy(f5, f5 + 5, p.friction);
  return p;
}

// Explicit <pair>: its own values only, never the geoms' (facts §1).
Params pair_params(const Model& m, int k) {
  Params p{};
  p.condim = m.pair_condim[k];
  for (int i = 0; i < 5; ++i) p.friction[i] = m.pair_friction[5 * k + i];
  for (int i = 0; i < 2; ++i) p.solref[i] = m.pair_solref[2 * k + i];
  for (int i = 0; i < 5; ++i) p.solimp[i] = m.pair_solimp[5 * k + i];
  p.margin = m.pair_margin[k];
  p.gap = m.pair_gap[k];
  return p;
}

class PairCompiler {
 public:
  explicit PairCompiler(Model& m) : m_(m) {}

  void run() {
    const int mode = m_.opt.collision;  // 0 all, 1 predefined, 2 dynamic
    std::vector<int> geomadr(m_.nbody + 1, 0);  // geoms are stored body by body
    for (int g = 0; g < m_.ngeom; ++g) ++geomadr[m_.geom_bodyid[g] + 1];
    for (int b = 0; b < m_.nbody; ++b) geomadr[b + 1] += geomadr[b];
    if (mode == 1) {
      for (int k = 0; k < m_.npair; ++k) add_pair(k);
      return;
    }
    int next_pair = 0, next_exclude = 0;
    for (int b1 = 0; b1 < m_.nbody; ++b1) {
      for (int b2 = b1 + 1; b2 < m_.nbody; ++b2) {
        const int sig = signature(b1, b2);
        // <pair>s with signature <= this body pair's run first (collision="all" only).
        const int block = next_pair;
        if (mode == 0)
          while (next_pair < m_.npair && pair_sig(next_pair) <= sig) add_pair(next_pair++);
        while (next_exclude < m_.nexclude &&
               signature(m_.exclude_body1[next_exclude], m_.exclude_body2[next_exclude]) < sig)
          ++next_exclude;
        if (next_exclude < m_.nexclude &&
            signature(m_.exclude_body1[next_exclude], m_.exclude_body2[next_exclude]) == sig)
          continue;
        for (int g1 = geomadr[b1]; g1 < geomadr[b1 + 1]; ++g1)
          for (int g2 = geomadr[b2]; g2 < geomadr[b2 + 1]; ++g2)
            if (!in_pairs(block, next_pair, sig, g1, g2)) add_dynamic(g1, g2);
      }
    }
    if (mode == 0)
      while (next_pair < m_.npair) add_pair(next_pair++);
  }

 private:
  int pair_sig(int k) const {
    return signature(m_.geom_bodyid[m_.pair_geom1[k]], m_.geom_bodyid[m_.pair_geom2[k]]);
  }

  // A dynamic pair already listed as a <pair> of the same body pair is not tested twice.
  bool in_pairs(int from, int to, int sig, int g1, int g2) const {
    for (int k = from; k < to; ++k) {
      if (pair_sig(k) != sig) continue;
      const int a = m_.pair_geom1[k], b = m_.pair_geom2[k];
      if ((a == g1 && b == g2) || (a == g2 && b == g1)) return true;
    }
    return false;
  }

  // Static filters 2-4 of facts §1 (exclude is handled per body pair).
  bool rejected(int g1, int g2) const {
    if (!(m_.geom_contype[g1] & m_.geom_conaffinity[g2]) && !(m_.geom_contype[g2] & m_.geom_conaffinity[g1]))
      return true;
    const int w1 = m_.body_weldid[m_.geom_bodyid[g1]], w2 = m_.body_weldid[m_.geom_bodyid[g2]];
    if (w1 == w2) return true;
    if (m_.opt.filterparent_enabled && w1 != 0 && w2 != 0) {
      const int parent1 = m_.body_weldid[m_.body_parentid[w1]];
      const int parent2 = m_.body_weldid[m_.body_parentid[w2]];
      if (w1 == parent2 || w2 == parent1) return true;
    }
    return false;
  }

  void add_dynamic(int g1, int g2) {
    order_by_type(g1, g2);
    if (!max_contacts(m_.geom_type[g1], m_.geom_type[g2]) || rejected(g1, g2)) return;
    emit(g1, g2, mix_geoms(m_, g1, g2));
  }

  void add_pair(int k) {
    int g1 = m_.pair_geom1[k], g2 = m_.pair_geom2[k];
    order_by_type(g1, g2);
    if (!max_contacts(m_.geom_type[g1], m_.geom_type[g2])) return;
    emit(g1, g2, pair_params(m_, k));
  }

  // geom1 has the lower type; equal types keep the visiting order (lower body first).
  void order_by_type(int& g1, int& g2) const {
    if (m_.geom_type[g1] > m_.geom_type[g2]) std::swap(g1, g2);
  }

  void emit(int g1, int g2, Params p) {
    for (GeomType t : {m_.geom_type[g1], m_.geom_type[g2]})
      if (t == GeomType::HField)
        throw std::invalid_argument("collision between geoms " + std::to_string(g1) + " and " +
                                    std::to_string(g2) +
                                    ": colliding height-field geoms are not supported");
    if (m_.opt.override_enabled) {
      // Friction is not overridden (mj_assignMargin/Ref/Imp).
      p.margin = m_.opt.o_margin;
      std::copy(m_.opt.o_solref, m_.opt.o_solref + 2, p.solref);
      std::copy(m_.opt.o_solimp, m_.opt.o_solimp + 5, p.solimp);
    }
    m_.cpair_geom1.push_back(g1);
    m_.cpair_geom2.push_back(g2);
    m_.cpair_condim.push_back(p.condim);
    for (double f : p.friction) m_.cpair_friction.push_back(std::max(kMinMu, f));
    m_.cpair_solref.insert(m_.cpair_solref.end(), p.solref, p.solref + 2);
    m_.cpair_solimp.insert(m_.cpair_solimp.end(), p.solimp, p.solimp + 5);
    m_.cpair_margin.push_back(p.margin);
    m_.cpair_gap.push_back(p.gap);
    m_.cpair_maxcon.push_back(max_contacts(m_.geom_type[g1], m_.geom_type[g2]));
  }

  Model& m_;
};

}  // namespace

int max_contacts(GeomType a, GeomType b) {
  if (a > b) std::swap(a, b);
  if (a == GeomType::HField || b == GeomType::HField) return 0;
  // the routine's own bound (box-box: up to 8 clipped points plus the deepest incident corner,
  // facts §2: 9 seen; plane-cylinder: 3 upright, up to 4 from the routine; plane-mesh: the
  // deepest vertex and two hull neighbours; any other mesh pair one, from MPR), 0 without a routine
  const int routine = kern::pair_routine(static_cast<int>(a), static_cast<int>(b));
  return routine == kern::kRoutineNone ? 0 : kern::routine_max_contacts(routine);
}

void compile_collision_pairs(Model& m) {
  m.ncpair = 0;
  for (auto* v : {&m.cpair_geom1, &m.cpair_geom2, &m.cpair_condim, &m.cpair_maxcon}) v->clear();
  for (auto* v : {&m.cpair_friction, &m.cpair_solref, &m.cpair_solimp, &m.cpair_margin, &m.cpair_gap})
    v->clear();
  if (!m.opt.contact_enabled || !m.opt.constraint_enabled || m.nbody < 2) return;
  PairCompiler(m).run();
  m.ncpair = static_cast<int>(m.cpair_geom1.size());
}

}  // namespace stiffgrad
