// Narrow phase against boxes: sphere-box, capsule-box and box-box, reproducing MuJoCo 2.2.2's
// engine_collision_box.c (and the box-box duplicate removal of mj_collideGeoms) with its quirks
// (docs/references/mujoco-2.2.2-constraints.md §2, §9): a sphere centre inside the box gives
// dist = -r; box-box picks an edge axis only when deeper by a factor 1 - 1e-12, always adds the
// deepest incident corner in the face case, and reports half the corner depth there.
// Conventions as in kernels/collision/collision_primitive.hpp.
#pragma once

#include "kernels/collision/collision_primitive.hpp"

namespace stiffgrad::kern {

namespace coll {

// Sphere (centre c, radius r) against a box (MuJoCo's _SphereBox): the centre clamped to the
// box; when the centre is inside (distance <= mjMINVAL), the nearest face decides the normal
// and dist = -r whatever the depth (facts §2 quirk).
template <class Real>
SG_HD SG_INLINE int sphere_box_at(const Real c[3], Real r, const GeomPose<Real>& box, Real margin,
                                  Contact<Real>* out) {
  const Real* size = box.size;
  Real tmp[3], center[3], clamped[3], pos[3], n[3];
  sub3(tmp, c, box.pos);
  mat_t_vec3(center, box.mat, tmp);
  for (int i = 0; i < 3; ++i) {
    clamped[i] = center[i];
    if (size[i] > Real(0)) clamped[i] = sg_clamp(center[i], -size[i], size[i]);
  }
  sub3(tmp, clamped, center);
  // a centre inside the box leaves tmp exactly zero: skip the square root there so that a dual
  // number's derivative stays finite (same value as MuJoCo's mju_normalize3: 0)
  const Real dist = dot3(tmp, tmp) == Real(0) ? Real(0) : normalize3(tmp);
  if (dist - r > margin) return 0;

  if (dist <= min_norm<Real>()) {
    // nearest face, first one on ties (faces -x, +x, -y, +y, -z, +z)
    Real closest = (size[0] + size[1] + size[2]) * Real(2);
    int k = 0;
    for (int i = 0; i < 6; ++i) {
      const Real face = (i % 2) ? size[i / 2] : -size[i / 2];
      const Real d = sg_abs(face - center[i / 2]);
      if (closest > d) { closest = d; k = i; }
    }
    Real nearest[3] = {Real(0), Real(0), Real(0)};
    nearest[k / 2] = (k % 2) ? Real(-1) : Real(1);
    copy3(pos, center);
    add_to_scl3(pos, nearest, (r - closest) / Real(2));
    mat_vec3(n, box.mat, nearest);
  } else {
    Real deepest[3];
    copy3(deepest, center);
    add_to_scl3(deepest, tmp, r);
    for (int i = 0; i < 3; ++i) pos[i] = clamped[i] * Real(0.5) + deepest[i] * Real(0.5);
    mat_vec3(n, box.mat, tmp);
  }
  set_normal(*out, n);
  mat_vec3(tmp, box.mat, pos);
  add3(out->pos, tmp, box.pos);
  out->dist = dist - r;
  return 1;
}

// Closest points of segment (p0 + x2 * hax, |x2| <= 1) and box edge (e0 + x1 * size_j e_j),
// as MuJoCo's capsule-box edge search: returns false when the lines are parallel (det < MINVAL).
// s1/s2: 0, 1, 2 = lower end, interior, upper end.
template <class Real>
SG_HD SG_INLINE bool segment_edge(const Real dif[3], Real sj, int j, const Real hax[3], Real hl,
                                  Real& x1, Real& x2, int& s1, int& s2) {
  const Real ma = sj * sj;
  const Real mb = -sj * hax[j];
  const Real mc = hl * hl;
  const Real u = -sj * dif[j];
  const Real v = dot3(hax, dif);
  const Real det = ma * mc - mb * mb;
  if (sg_abs(det) < min_norm<Real>()) return false;
  const Real idet = Real(1) / det;
  x1 = (mc * u - mb * v) * idet;
  x2 = (ma * v - mb * u) * idet;
  s1 = s2 = 1;
  if (x1 > Real(1)) {
    x1 = Real(1); s1 = 2; x2 = (v - mb) * (Real(1) / mc);
  } else if (x1 < Real(-1)) {
    x1 = Real(-1); s1 = 0; x2 = (v + mb) * (Real(1) / mc);
  }
  if (x2 > Real(1)) {
    x2 = Real(1); s2 = 2; x1 = (u - mb) * (Real(1) / ma);
    if (x1 > Real(1)) { x1 = Real(1); s1 = 2; } else if (x1 < Real(-1)) { x1 = Real(-1); s1 = 0; }
  } else if (x2 < Real(-1)) {
    x2 = Real(-1); s2 = 0; x1 = (u + mb) * (Real(1) / ma);
    if (x1 > Real(1)) { x1 = Real(1); s1 = 2; } else if (x1 < Real(-1)) { x1 = Real(-1); s1 = 0; }
  }
  return true;
}

}  // namespace coll

// sphere : box
template <class Real>
SG_HD int collide_sphere_box(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                             Contact<Real>* out) {
  return coll::sphere_box_at(g1.pos, g1.size[0], g2, margin, out);
}

// capsule : box (mjc_CapsuleBox): the closest feature pair (a capsule end against a face, or the
// segment against one of the 12 edges), then sphere-box at that segment point and, when the
// capsule lies along a face or crosses an edge, at a second point further along the segment
// (at most 2 contacts).
template <class Real>
SG_HD int collide_capsule_box(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                              Contact<Real>* out) {
  const Real* size = g2.size;
  const Real hl = g1.size[1];
  Real tmp1[3], tmp2[3], tmp3[3], pos[3], axis[3], hax[3], dif[3];
  sub3(tmp1, g1.pos, g2.pos);
  coll::mat_t_vec3(pos, g2.mat, tmp1);  // capsule centre in the box frame
  coll::mat_col(tmp1, g1.mat, 2);
  coll::mat_t_vec3(axis, g2.mat, tmp1);  // capsule axis in the box frame
  coll::scl3(hax, axis, hl);
  const int axisdir = (hax[0] > Real(0) ? 1 : 0) + (hax[1] > Real(0) ? 2 : 0) + (hax[2] > Real(0) ? 4 : 0);

  const Real bestdistmax = margin + Real(2) * (g1.size[0] + hl + size[0] + size[1] + size[2]);
  Real bestdist = bestdistmax;
  Real bestsegmentpos = Real(0), bestboxpos = Real(0);
  int cltype = -4, clface = -1, clcorner = 0, cledge = 0;

  // a capsule end against a face (at most one coordinate outside the box)
  for (int i = -1; i <= 1; i += 2) {
    copy3(tmp1, pos);
    coll::add_to_scl3(tmp1, hax, Real(i));
    copy3(tmp2, tmp1);
    int c1 = 0, c2 = -1;
    for (int j = 0; j < 3; ++j) {
      if (tmp1[j] < -size[j]) { ++c1; c2 = j; tmp1[j] = -size[j]; }
      else if (tmp1[j] > size[j]) { ++c1; c2 = j; tmp1[j] = size[j]; }
    }
    if (c1 > 1) continue;
    sub3(tmp1, tmp1, tmp2);
    const Real d = dot3(tmp1, tmp1);
    if (d < bestdist) {
      bestdist = d;
      bestsegmentpos = Real(i);
      cltype = -2 + i;
      clface = c2;
    }
  }

  // the segment against each box edge (edge along axis j through corner i with bit j clear)
  for (int j = 0; j < 3; ++j) {
    for (int i = 0; i < 8; ++i) {
      if (i & (1 << j)) continue;
      tmp3[0] = ((i & 1) ? Real(1) : Real(-1)) * size[0];
      tmp3[1] = ((i & 2) ? Real(1) : Real(-1)) * size[1];
      tmp3[2] = ((i & 4) ? Real(1) : Real(-1)) * size[2];
      tmp3[j] = Real(0);
      sub3(dif, tmp3, pos);
      Real x1, x2;
      int s1, s2;
      if (!coll::segment_edge(dif, size[j], j, hax, hl, x1, x2, s1, s2)) continue;
      coll::add_to_scl3(dif, hax, -x2);
      dif[j] += size[j] * x1;
      const Real d = dot3(dif, dif);
      // MuJoCo's -mjMINVAL guards axes numerically parallel to a face
      if (d < bestdist - min_norm<Real>()) {
        bestdist = d;
        bestsegmentpos = x2;
        bestboxpos = x1;
        const int c1 = s1 * 3 + s2;
        clcorner = i + (1 << j) * (c1 / 6);
        cledge = j;
        cltype = c1;
      }
    }
  }
  if (cltype == -4) return 0;

  // second point along the segment (MuJoCo's bit tricks on axisdir and the closest corner)
  Real secondpos = Real(-4);
  if (cltype >= 0 && cltype / 3 != 1) {  // closest to a box corner
    int c1 = axisdir ^ clcorner;
    if (c1 != 0 && c1 != 7) {
      Real mul = Real(1), de = Real(0), dp = Real(0);
      if (c1 == 1 || c1 == 2 || c1 == 4) {
        mul = Real(1); de = Real(1) - bestsegmentpos; dp = Real(1) + bestsegmentpos;
      } else {
        mul = Real(-1); c1 = 7 - c1; dp = Real(1) - bestsegmentpos; de = Real(1) + bestsegmentpos;
      }
      const int ax = c1 == 1 ? 0 : (c1 == 2 ? 1 : 2);
      const int ax1 = (ax + 1) % 3, ax2 = (ax + 2) % 3;
      if (axis[ax] * axis[ax] > Real(0.5)) {  // along the box edge
        secondpos = de;
        const Real e1 = Real(2) * size[ax] / sg_abs(hax[ax]);
        if (e1 < secondpos) secondpos = e1;
        secondpos = secondpos * mul;
      } else {  // along a face
        secondpos = dp;
        Real e1 = Real(2) * size[ax1] / sg_abs(hax[ax1]);
        if (e1 < secondpos) secondpos = e1;
        e1 = Real(2) * size[ax2] / sg_abs(hax[ax2]);
        if (e1 < secondpos) secondpos = e1;
        secondpos = secondpos * -mul;
      }
    }
  } else if (cltype >= 0) {  // interior of a box edge: only the crossing (X) configuration
    int c1 = (axisdir ^ clcorner) & (7 - (1 << cledge));
    if (c1 == 1 || c1 == 2 || c1 == 4) {
      const int ax = cledge;
      int ax1 = (cledge + 1) % 3, ax2 = (cledge + 2) % 3;
      if (sg_abs(axis[ax1]) > sg_abs(axis[ax2])) ax1 = ax2;
      ax2 = 3 - ax - ax1;
      Real mul;
      if (c1 & (1 << ax2)) { mul = Real(1); secondpos = Real(1) - bestsegmentpos; }
      else { mul = Real(-1); secondpos = Real(1) + bestsegmentpos; }
      Real e1 = Real(2) * size[ax2] / sg_abs(hax[ax2]);
      if (e1 < secondpos) secondpos = e1;
      const Real e2 = (((axisdir & (1 << ax)) != 0) == ((c1 & (1 << ax2)) != 0))
                          ? Real(1) - bestboxpos : Real(1) + bestboxpos;
      e1 = size[ax] * e2 / sg_abs(hax[ax]);
      if (e1 < secondpos) secondpos = e1;
      secondpos = secondpos * mul;
    }
  } else if (clface != -1) {  // a capsule end against a face: how far the segment stays over it
    const Real mul = cltype == -3 ? Real(1) : Real(-1);
    secondpos = Real(2);
    copy3(tmp1, pos);
    coll::add_to_scl3(tmp1, hax, -mul);
    for (int i = 0; i < 3; ++i) {
      if (i == clface) continue;
      Real e1 = (size[i] - tmp1[i]) / hax[i] * mul;
      if (e1 > Real(0) && e1 < secondpos) secondpos = e1;
      e1 = (-size[i] - tmp1[i]) / hax[i] * mul;
      if (e1 > Real(0) && e1 < secondpos) secondpos = e1;
    }
    secondpos = secondpos * mul;
  }

  // sphere-box at the closest segment point and at the second one, one copy of the sphere test
  // in a loop (two inlined made the Dual adjoint's frame spill)
  const Real segment[2] = {bestsegmentpos, secondpos + bestsegmentpos};
  const int tests = secondpos > Real(-3) ? 2 : 1;
  int n = 0;
#if defined(__CUDACC__)
#pragma unroll 1
#endif
  for (int i = 0; i < tests; ++i) {
    copy3(tmp1, pos);
    coll::add_to_scl3(tmp1, hax, segment[i]);
    mat_vec3(tmp2, g2.mat, tmp1);
    add3(tmp2, tmp2, g2.pos);
    n += coll::sphere_box_at(tmp2, g1.size[0], g2, margin, out + n);
  }
  return n;
}

namespace coll {

// MuJoCo's box-box "rotmore": a signed permutation taking face `f` (0..2: -x.. order of its
// code, see below) to +z. Row k of the matrix is sign[k] * e_{idx[k]}.
template <class Real> SG_HD SG_INLINE void face_rotation(int f, Real rm[9]) {
  for (int k = 0; k < 9; ++k) rm[k] = Real(0);
  switch (f) {
    case 0: rm[2] = Real(-1); rm[4] = Real(1); rm[6] = Real(1); break;
    case 1: rm[0] = Real(1); rm[5] = Real(-1); rm[7] = Real(1); break;
    case 2: rm[0] = Real(1); rm[4] = Real(1); rm[8] = Real(1); break;
    case 3: rm[2] = Real(1); rm[4] = Real(1); rm[6] = Real(-1); break;
    case 4: rm[0] = Real(1); rm[5] = Real(1); rm[7] = Real(-1); break;
    default: rm[0] = Real(-1); rm[4] = Real(1); rm[8] = Real(-1); break;
  }
}
// r = A B, r = A B^T, r = A^T B (3x3 row-major; r must not alias)
template <class Real> SG_HD SG_INLINE void mat_mul(Real r[9], const Real A[9], const Real B[9]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
template <class Real> SG_HD SG_INLINE void mat_mul_t(Real r[9], const Real A[9], const Real B[9]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}
template <class Real> SG_HD SG_INLINE void mat_t_mul(Real r[9], const Real A[9], const Real B[9]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}
template <class Real> SG_HD SG_INLINE void transpose3(Real r[9], const Real A[9]) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[3 * i + j] = A[3 * j + i];
}

// Working capacity of box-box candidate points before the margin filter and duplicate removal
// (MuJoCo uses mjMAXCONPAIR = 50; geometrically at most 8 edge crossings + 4 + 4 corners).
constexpr int kBoxBoxPoints = 24;

}  // namespace coll

// box : box (mjc_BoxBox + the exact-duplicate removal of mj_collideGeoms). Separating-axis
// test over the 6 face normals and 9 edge cross products; a face axis gives the face-clipping
// manifold, an edge axis the edge-edge routine. Returns at most kMaxContactsPerPair contacts.
template <class Real>
SG_HD int collide_box_box(const GeomPose<Real>& g1, const GeomPose<Real>& g2, Real margin,
                          Contact<Real>* out) {
  using namespace coll;
  const Real *pos1 = g1.pos, *mat1 = g1.mat, *size1 = g1.size;
  const Real *pos2 = g2.pos, *mat2 = g2.mat, *size2 = g2.size;
  Real pos12[3], pos21[3], rot[9], rott[9], rotabs[9], rottabs[9], tmp1[3], tmp2[3], plen1[3], plen2[3];
  Real rotmore[9], p[3], r[9], rt[9], s[3];
  Real points[kBoxBoxPoints][3], depth[kBoxBoxPoints];
  Real normal[3];
  int n = 0;
  int code = -1;

  sub3(tmp1, pos2, pos1);
  mat_t_vec3(pos21, mat1, tmp1);
  sub3(tmp1, pos1, pos2);
  mat_t_vec3(pos12, mat2, tmp1);
  mat_t_mul(rot, mat1, mat2);
  transpose3(rott, rot);
  for (int i = 0; i < 9; ++i) { rotabs[i] = sg_abs(rot[i]); rottabs[i] = sg_abs(rott[i]); }
  mat_vec3(plen2, rotabs, size2);
  mat_t_vec3(plen1, rotabs, size1);

  // face axes
  Real penetration = margin;
  for (int i = 0; i < 3; ++i) penetration = penetration + size1[i] * Real(3) + size2[i] * Real(3);
  for (int i = 0; i < 3; ++i) {
    const Real c1 = -sg_abs(pos21[i]) + size1[i] + plen2[i];
    const Real c2 = -sg_abs(pos12[i]) + size2[i] + plen1[i];
    if (c1 < -margin || c2 < -margin) return 0;
    if (c1 < penetration) { penetration = c1; code = i + 3 * (pos21[i] < Real(0) ? 1 : 0); }
    if (c2 < penetration) { penetration = c2; code = i + 3 * (pos12[i] < Real(0) ? 1 : 0) + 6; }
  }

  // edge axes e_i (box 1) x axis j of box 2, preferred only when deeper by 1 - 1e-12
  int cle1 = 0, cle2 = 0, in = 0;
  Real clnorm[3] = {Real(0), Real(0), Real(0)};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      zero3(tmp2);
      if (i == 0) { tmp2[1] = -rott[3 * j + 2]; tmp2[2] = rott[3 * j + 1]; }
      else if (i == 1) { tmp2[0] = rott[3 * j + 2]; tmp2[2] = -rott[3 * j]; }
      else { tmp2[0] = -rott[3 * j + 1]; tmp2[1] = rott[3 * j]; }
      const Real c1 = normalize3(tmp2);
      if (c1 < min_norm<Real>()) continue;
      const Real c2 = dot3(pos21, tmp2);
      Real c3 = Real(0);
      for (int k = 0; k < 3; ++k)
        if (k != i) c3 = c3 + size1[k] * sg_abs(tmp2[k]);
      for (int k = 0; k < 3; ++k)
        if (k != j) c3 = c3 + size2[k] * rotabs[3 * i + 3 - k - j] / c1;
      c3 = c3 - sg_abs(c2);
      if (c3 < -margin) return 0;
      if (c3 < penetration * (Real(1) - Real(1e-12))) {
        penetration = c3;
        cle1 = 0;
        for (int k = 0; k < 3; ++k)
          if (k != i && ((tmp2[k] > Real(0)) != (c2 < Real(0)))) cle1 += 1 << k;
        cle2 = 0;
        for (int k = 0; k < 3; ++k)
          if (k != j && (((rot[3 * i + 3 - k - j] > Real(0)) != (c2 < Real(0))) != ((k - j + 3) % 3 == 1)))
            cle2 += 1 << k;
        code = 12 + i * 3 + j;
        copy3(clnorm, tmp2);
        in = c2 < Real(0) ? 1 : 0;
      }
    }
  }
  if (code == -1) return 0;

  if (code < 12) {
    // ---- face case: reference face of box q2 (0: box 1, 1: box 2), rotated to +z
    const int q1 = code % 6, q2 = code / 6;
    face_rotation(q1, rotmore);
    Real sz[3];
    if (q2) {
      mat_mul_t(r, rotmore, rot);
      mat_vec3(p, rotmore, pos12);
      mat_vec3(tmp1, rotmore, size2);
      copy3(sz, size1);
    } else {
      mat_mul(r, rotmore, rot);
      mat_vec3(p, rotmore, pos21);
      mat_vec3(tmp1, rotmore, size1);
      copy3(sz, size2);
    }
    copy3(s, sz);
    transpose3(rt, r);
    Real ss[3];
    for (int i = 0; i < 3; ++i) ss[i] = sg_abs(tmp1[i]);
    const Real lx = ss[0], ly = ss[1], hz = ss[2];
    p[2] = p[2] - hz;

    // the incident box's corner deepest along -z, and its edges leaving the reference plane
    int clcorner = 0;
    for (int i = 0; i < 3; ++i)
      if (r[6 + i] < Real(0)) clcorner += 1 << i;
    Real lp[3];
    copy3(lp, p);
    add_to_scl3(lp, rt + 0, s[0] * ((clcorner & 1) ? Real(1) : Real(-1)));
    add_to_scl3(lp, rt + 3, s[1] * ((clcorner & 2) ? Real(1) : Real(-1)));
    add_to_scl3(lp, rt + 6, s[2] * ((clcorner & 4) ? Real(1) : Real(-1)));
    Real pts[6][3];
    for (int a = 0; a < 6; ++a) zero3(pts[a]);
    int m = 0;
    copy3(pts[m++], lp);
    for (int i = 0; i < 3; ++i)
      if (sg_abs(r[6 + i]) < Real(0.5))
        scl3(pts[m++], rt + 3 * i, s[i] * ((clcorner & (1 << i)) ? Real(-2) : Real(2)));
    add3(pts[3], pts[0], pts[1]);
    add3(pts[4], pts[0], pts[2]);
    add3(pts[5], pts[3], pts[2]);

    // incident edges (start, direction) crossing the reference rectangle's sides
    Real lines[4][6];
    int k = 0;
    auto set_line = [&](const Real a[3], const Real b[3]) {
      copy3(lines[k], a);
      copy3(lines[k] + 3, b);
      ++k;
    };
    if (m > 1) set_line(pts[0], pts[1]);
    if (m > 2) {
      set_line(pts[0], pts[2]);
      set_line(pts[3], pts[2]);
      set_line(pts[4], pts[1]);
    }
    for (int i = 0; i < k; ++i) {
      for (int q = 0; q < 2; ++q) {
        const Real a = lines[i][q], b = lines[i][3 + q], c = lines[i][1 - q], d = lines[i][4 - q];
        if (!(sg_abs(b) > min_norm<Real>())) continue;
        for (int j = -1; j <= 1; j += 2) {
          const Real l = ss[q] * Real(j);
          const Real c1 = (l - a) * (Real(1) / b);
          if (c1 < Real(0) || c1 > Real(1)) continue;
          const Real c2 = c + d * c1;
          if (sg_abs(c2) > ss[1 - q]) continue;
          if (n >= kBoxBoxPoints) continue;
          copy3(points[n], lines[i]);
          add_to_scl3(points[n], lines[i] + 3, c1);
          ++n;
        }
      }
    }

    // reference corners strictly inside the incident face
    if (m > 2) {
      const Real a = pts[1][0], b = pts[2][0], c = pts[1][1], d = pts[2][1];
      const Real c1 = a * d - b * c;
      for (int i = 0; i < 4; ++i) {
        const Real llx = (i / 2) ? lx : -lx;
        const Real lly = (i % 2) ? ly : -ly;
        const Real x = llx - pts[0][0], y = lly - pts[0][1];
        const Real u = (x * d - y * b) * (Real(1) / c1);
        const Real v = (y * a - x * c) * (Real(1) / c1);
        if (u <= Real(0) || v <= Real(0) || u >= Real(1) || v >= Real(1)) continue;
        if (n >= kBoxBoxPoints) continue;
        points[n][0] = llx;
        points[n][1] = lly;
        points[n][2] = pts[0][2] + u * pts[1][2] + v * pts[2][2];
        ++n;
      }
    }

    // incident corners inside the reference rectangle; the deepest one (i = 0) always
    for (int i = 0; i < (1 << (m - 1)); ++i) {
      copy3(tmp1, pts[i == 0 ? 0 : i + 2]);
      if (i && (tmp1[0] <= -lx || tmp1[0] >= lx)) continue;
      if (i && (tmp1[1] <= -ly || tmp1[1] >= ly)) continue;
      if (n >= kBoxBoxPoints) continue;
      copy3(points[n++], tmp1);
    }

    // keep those within the margin; MuJoCo's dist is the halved height (the midpoint's z)
    const int m2 = n;
    n = 0;
    for (int i = 0; i < m2; ++i) {
      if (points[i][2] > margin) continue;
      copy3(points[n], points[i]);
      depth[n] = points[n][2];
      points[n][2] = points[n][2] * Real(0.5);
      ++n;
    }
    mat_mul_t(r, q2 ? mat2 : mat1, rotmore);
    copy3(p, q2 ? pos2 : pos1);
    const Real sgn = q2 ? Real(-1) : Real(1);
    normal[0] = sgn * r[2]; normal[1] = sgn * r[5]; normal[2] = sgn * r[8];
    for (int i = 0; i < n; ++i) {
      depth[i] = points[i][2];
      points[i][2] = points[i][2] + hz;
      mat_vec3(tmp2, r, points[i]);
      add3(points[i], tmp2, p);
    }
  } else {
    // ---- edge-edge case
    const int c = code - 12;
    const int q1 = c / 3, q2 = c % 3;
    int ax1 = 0, ax2 = 0, pax1 = 0, pax2 = 0;
    if (q2 == 0) { ax1 = 1; ax2 = 2; }
    if (q2 == 1) { ax1 = 0; ax2 = 2; }
    if (q2 == 2) { ax1 = 1; ax2 = 0; }
    if (q1 == 0) { pax1 = 1; pax2 = 2; }
    if (q1 == 1) { pax1 = 0; pax2 = 2; }
    if (q1 == 2) { pax1 = 1; pax2 = 0; }
    if (rotabs[3 * q1 + ax1] < rotabs[3 * q1 + ax2]) { ax1 = ax2; ax2 = 3 - q2 - ax1; }
    if (rottabs[3 * q2 + pax1] < rottabs[3 * q2 + pax2]) { pax1 = pax2; pax2 = 3 - q1 - pax1; }
    const int clface = (cle1 & (1 << pax2)) ? pax2 : pax2 + 3;

    face_rotation(clface, rotmore);
    Real rnorm[3];
    mat_vec3(p, rotmore, pos21);
    mat_vec3(rnorm, rotmore, clnorm);
    mat_mul(r, rotmore, rot);
    mat_t_vec3(tmp1, rotmore, size1);
    for (int i = 0; i < 3; ++i) s[i] = sg_abs(tmp1[i]);
    transpose3(rt, r);
    const Real lx = s[0], ly = s[1], hz = s[2];
    p[2] = p[2] - hz;

    // the two incident edges of box 2 nearest the reference face (4 end points)
    Real pp[4][3];
    copy3(pp[0], p);
    add_to_scl3(pp[0], rt + 3 * ax1, size2[ax1] * ((cle2 & (1 << ax1)) ? Real(1) : Real(-1)));
    add_to_scl3(pp[0], rt + 3 * ax2, size2[ax2] * ((cle2 & (1 << ax2)) ? Real(1) : Real(-1)));
    copy3(pp[1], pp[0]);
    add_to_scl3(pp[0], rt + 3 * q2, size2[q2]);
    add_to_scl3(pp[1], rt + 3 * q2, -size2[q2]);
    copy3(pp[2], p);
    add_to_scl3(pp[2], rt + 3 * ax1, size2[ax1] * ((cle2 & (1 << ax1)) ? Real(-1) : Real(1)));
    add_to_scl3(pp[2], rt + 3 * ax2, size2[ax2] * ((cle2 & (1 << ax2)) ? Real(1) : Real(-1)));
    copy3(pp[3], pp[2]);
    add_to_scl3(pp[2], rt + 3 * q2, size2[q2]);
    add_to_scl3(pp[3], rt + 3 * q2, -size2[q2]);

    Real axi[3][3];
    copy3(axi[0], pp[0]);
    sub3(axi[1], pp[1], pp[0]);
    sub3(axi[2], pp[2], pp[0]);
    if (sg_abs(rnorm[2]) < min_norm<Real>()) return 0;
    const Real innorm = (Real(1) / rnorm[2]) * (in ? Real(-1) : Real(1));

    // project the 4 points along rnorm onto the reference plane
    Real pu[4][3], ppts2[4][2];
    for (int i = 0; i < 4; ++i) {
      const Real c1 = -pp[i][2] * (Real(1) / rnorm[2]);
      copy3(pu[i], pp[i]);
      add_to_scl3(pp[i], rnorm, c1);
      ppts2[i][0] = pp[i][0];
      ppts2[i][1] = pp[i][1];
    }
    Real pts[3][3];
    copy3(pts[0], pp[0]);
    sub3(pts[1], pp[1], pp[0]);
    sub3(pts[2], pp[2], pp[0]);

    Real lines[4][6], linesu[4][6];
    copy3(lines[0], pts[0]); copy3(lines[0] + 3, pts[1]);
    copy3(linesu[0], axi[0]); copy3(linesu[0] + 3, axi[1]);
    copy3(lines[1], pts[0]); copy3(lines[1] + 3, pts[2]);
    copy3(linesu[1], axi[0]); copy3(linesu[1] + 3, axi[2]);
    add3(lines[2], pts[0], pts[1]); copy3(lines[2] + 3, pts[2]);
    add3(linesu[2], axi[0], axi[1]); copy3(linesu[2] + 3, axi[2]);
    add3(lines[3], pts[0], pts[2]); copy3(lines[3] + 3, pts[1]);
    add3(linesu[3], axi[0], axi[2]); copy3(linesu[3] + 3, axi[1]);

    // projected parallelogram edges against the reference rectangle's sides
    for (int i = 0; i < 4; ++i) {
      for (int q = 0; q < 2; ++q) {
        const Real a = lines[i][q], b = lines[i][3 + q], cc = lines[i][1 - q], d = lines[i][4 - q];
        if (!(sg_abs(b) > min_norm<Real>())) continue;
        for (int j = -1; j <= 1; j += 2) {
          if (n >= kBoxBoxPoints) continue;
          const Real l = s[q] * Real(j);
          const Real c1 = (l - a) * (Real(1) / b);
          if (c1 < Real(0) || c1 > Real(1)) continue;
          const Real c2 = cc + d * c1;
          if (sg_abs(c2) > s[1 - q]) continue;
          if ((linesu[i][2] + linesu[i][5] * c1) * innorm > margin) continue;
          scl3(points[n], linesu[i], Real(0.5));
          add_to_scl3(points[n], linesu[i] + 3, Real(0.5) * c1);
          points[n][q] = points[n][q] + Real(0.5) * l;
          points[n][1 - q] = points[n][1 - q] + Real(0.5) * c2;
          depth[n] = points[n][2] * innorm * Real(2);
          ++n;
        }
      }
    }
    const int nl = n;

    // reference corners inside the projected parallelogram
    {
      const Real a = pts[1][0], b = pts[2][0], cc = pts[1][1], d = pts[2][1];
      // MuJoCo reuses one variable for this determinant and for each accepted corner's squared
      // distance below, so corners after the first accepted one see that distance here: kept
      // for parity (it decides which corners count).
      Real det = a * d - b * cc;
      for (int i = 0; i < 4; ++i) {
        if (n >= kBoxBoxPoints) continue;
        const Real llx = (i / 2) ? lx : -lx;
        const Real lly = (i % 2) ? ly : -ly;
        const Real x = llx - pts[0][0], y = lly - pts[0][1];
        Real u = (x * d - y * b) * (Real(1) / det);
        Real v = (y * a - x * cc) * (Real(1) / det);
        if (nl == 0) {
          if ((u < Real(0) || u > Real(1)) && (v < Real(0) || v > Real(1))) continue;
        } else if (u < Real(0) || u > Real(1) || v < Real(0) || v > Real(1)) {
          continue;
        }
        u = sg_clamp(u, Real(0), Real(1));
        v = sg_clamp(v, Real(0), Real(1));
        scl3(tmp1, pu[0], Real(1) - u - v);
        add_to_scl3(tmp1, pu[1], u);
        add_to_scl3(tmp1, pu[2], v);
        points[n][0] = llx; points[n][1] = lly; points[n][2] = Real(0);
        sub3(tmp2, points[n], tmp1);
        const Real c1 = dot3(tmp2, tmp2);
        det = c1;
        if (tmp1[2] > Real(0) && c1 > margin * margin) continue;
        add3(points[n], points[n], tmp1);
        scl3(points[n], points[n], Real(0.5));
        depth[n] = sg_sqrt(c1) * (tmp1[2] < Real(0) ? Real(-1) : Real(1));
        ++n;
      }
    }
    const int nf = n;

    // incident edge end points over the reference face
    for (int i = 0; i < 4; ++i) {
      if (n >= kBoxBoxPoints) continue;
      const Real x = ppts2[i][0], y = ppts2[i][1];
      if (nl == 0) {
        if (nf != 0 && (x < -lx || x > lx) && (y < -ly || y > ly)) continue;
      } else if (x < -lx || x > lx || y < -ly || y > ly) {
        continue;
      }
      Real c1 = Real(0);
      for (int j = 0; j < 2; ++j) {
        if (ppts2[i][j] < -s[j]) c1 = c1 + (ppts2[i][j] + s[j]) * (ppts2[i][j] + s[j]);
        else if (ppts2[i][j] > s[j]) c1 = c1 + (ppts2[i][j] - s[j]) * (ppts2[i][j] - s[j]);
      }
      c1 = c1 + pu[i][2] * innorm * pu[i][2] * innorm;
      if (pu[i][2] > Real(0) && c1 > margin * margin) continue;
      tmp1[0] = ppts2[i][0] * Real(0.5);
      tmp1[1] = ppts2[i][1] * Real(0.5);
      tmp1[2] = Real(0);
      for (int j = 0; j < 2; ++j) {
        if (ppts2[i][j] < -s[j]) tmp1[j] = -s[j] * Real(0.5);
        else if (ppts2[i][j] > s[j]) tmp1[j] = s[j] * Real(0.5);
      }
      add_to_scl3(tmp1, pu[i], Real(0.5));
      copy3(points[n], tmp1);
      depth[n] = sg_sqrt(c1) * (pu[i][2] < Real(0) ? Real(-1) : Real(1));
      ++n;
    }

    mat_mul_t(r, mat1, rotmore);
    mat_vec3(tmp1, r, rnorm);
    scl3(normal, tmp1, in ? Real(-1) : Real(1));
    for (int i = 0; i < n; ++i) {
      points[i][2] = points[i][2] + hz;
      mat_vec3(tmp2, r, points[i]);
      add3(points[i], tmp2, pos1);
    }
  }

  // mj_collideGeoms drops a box-box contact whose position equals a later one's exactly
  int cnt = 0;
  for (int i = 0; i < n; ++i) {
    bool dup = false;
    for (int j = i + 1; j < n && !dup; ++j)
      dup = points[i][0] == points[j][0] && points[i][1] == points[j][1] && points[i][2] == points[j][2];
    if (dup || cnt >= kMaxContactsPerPair) continue;
    set_normal(out[cnt], normal);
    out[cnt].dist = depth[i];
    copy3(out[cnt].pos, points[i]);
    ++cnt;
  }
  return cnt;
}

}  // namespace stiffgrad::kern
