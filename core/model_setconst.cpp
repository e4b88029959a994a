// stiffgrad — inverse weights and mean inertia at qpos0 (MuJoCo 2.2.2 mj_setConst, facts §4).
//
// At qpos0 every joint is at its reference (hinge/slide displacement qpos - qpos0 = 0, ball at
// identity, free at the body's own pose), so the world pose of each body is the product of the
// static body_pos/body_quat chain; the Jacobians below are built from that directly. M comes
// from the same kernels the simulator runs (smooth_dynamics), armature included, as MuJoCo's.
#include "core/model_setconst.hpp"

#include <Eigen/Dense>
#include <vector>

#include "stiffgrad/dynamics.hpp"

namespace stiffgrad {
namespace {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;

struct Pose0 {
  std::vector<Vec3> xpos, xipos;  // nbody  body origin and centre of mass, world frame
  std::vector<Mat3> xmat;         // nbody  body orientation
};

Pose0 pose_at_qpos0(const Model& m) {
  Pose0 p;
  p.xpos.assign(m.nbody, Vec3::Zero());
  p.xipos.assign(m.nbody, Vec3::Zero());
  p.xmat.assign(m.nbody, Mat3::Identity());
  for (int b = 1; b < m.nbody; ++b) {
    const int a = m.body_parentid[b];
    const double* q = &m.body_quat[4 * b];
    const Mat3 r = Eigen::Quaterniond(q[0], q[1], q[2], q[3]).normalized().toRotationMatrix();
    p.xpos[b] = p.xpos[a] + p.xmat[a] * Vec3(m.body_pos[3 * b], m.body_pos[3 * b + 1], m.body_pos[3 * b + 2]);
    p.xmat[b] = p.xmat[a] * r;
    p.xipos[b] = p.xpos[b] + p.xmat[b] * Vec3(m.body_ipos[3 * b], m.body_ipos[3 * b + 1], m.body_ipos[3 * b + 2]);
  }
  return p;
}

// Angular and linear velocity of a point moving with body b, per unit velocity of `dof`
// (the dof's motion axis as mj_comPos builds it: hinge/slide jnt_axis, ball and free
// rotations the body frame's axes, free translations the world axes).
void dof_motion(const Model& m, const Pose0& p, int dof, const Vec3& point, Vec3& ang, Vec3& lin) {
  const int j = m.dof_jntid[dof], b = m.jnt_bodyid[j], k = dof - m.jnt_dofadr[j];
  const Vec3 anchor = p.xpos[b] + p.xmat[b] * Vec3(m.jnt_pos[3 * j], m.jnt_pos[3 * j + 1], m.jnt_pos[3 * j + 2]);
  const Vec3 axis = p.xmat[b] * Vec3(m.jnt_axis[3 * j], m.jnt_axis[3 * j + 1], m.jnt_axis[3 * j + 2]);
  ang.setZero();
  lin.setZero();
  switch (m.jnt_type[j]) {
    case JointType::Free:
      if (k < 3) {
        lin[k] = 1;
        return;
      }
      ang = p.xmat[b].col(k - 3);
      break;
    case JointType::Ball: ang = p.xmat[b].col(k); break;
    case JointType::Slide: lin = axis; return;
    case JointType::Hinge: ang = axis; break;
  }
  lin = ang.cross(point - anchor);
}

// Mean of the diagonal entries [from, from + n) of J M^-1 J^T.
double mean_diag(const Eigen::LLT<Eigen::MatrixXd>& llt, const Eigen::MatrixXd& jt, int from, int n) {
  double s = 0;
  for (int r = from; r < from + n; ++r) s += jt.col(r).dot(llt.solve(jt.col(r)));
  return s / n;
}

}  // namespace

// A connect's anchor in body2's frame at qpos0 (mj_setConst): eq_data[3..5] = R2ᵀ (x1 + R1 a - x2).
// A connect between sites has both anchors already (the sites' positions).
void set_equality_anchors(Model& m) {
  if (m.neq == 0) return;
  const Pose0 p = pose_at_qpos0(m);
  for (int i = 0; i < m.neq; ++i) {
    if (m.eq_type[static_cast<std::size_t>(i)] != 0 ||
        m.eq_objtype[static_cast<std::size_t>(i)] == 6)
      continue;
    const int b1 = m.eq_obj1id[static_cast<std::size_t>(i)],
              b2 = m.eq_obj2id[static_cast<std::size_t>(i)];
    double* data = &m.eq_data[11 * static_cast<std::size_t>(i)];
    const Vec3 world = p.xpos[b1] + p.xmat[b1] * Vec3(data[0], data[1], data[2]);
    const Vec3 local = p.xmat[b2].transpose() * (world - p.xpos[b2]);
    for (int k = 0; k < 3; ++k) data[3 + k] = local[k];
  }
}

void set_constants(Model& m) {
  const int nv = m.nv;
  m.body_invweight0.assign(2 * m.nbody, 0.0);
  m.dof_invweight0.assign(nv, 0.0);
  m.tendon_invweight0.assign(m.ntendon, 0.0);
  set_equality_anchors(m);
  if (nv == 0) return;  // MuJoCo leaves meaninertia at its default then

  const std::vector<double> zeros(std::max(nv, m.nu), 0.0);
  const SmoothDynamics sd = smooth_dynamics(m, m.qpos0.data(), zeros.data(), zeros.data());
  const Eigen::MatrixXd M = Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(sd.M.data(), nv, nv);
  const Eigen::LLT<Eigen::MatrixXd> llt(M);
  m.stat_meaninertia = M.diagonal().mean();

  // Bodies: J^T columns 0-2 translational, 3-5 rotational (mj_jacBodyCom). Under fusestatic
  // (body_fusedid) a body is weighed as the fused body MuJoCo 2.2.2 would make of it: at the
  // mass-weighted centre of its group, with its group's dofs (the root's).
  const Pose0 p = pose_at_qpos0(m);
  std::vector<Vec3> point(p.xipos);
  if (!m.body_fusedid.empty()) {
    std::vector<Vec3> moment(m.nbody, Vec3::Zero());
    std::vector<double> mass(m.nbody, 0.0);
    for (int b = 1; b < m.nbody; ++b) {
      const int r = m.body_fusedid[b];
      if (m.body_mass[b] < 1e-15) continue;  // FuseStatic adds a body's mass only above mjMINVAL
      mass[r] += m.body_mass[b];
      moment[r] += m.body_mass[b] * p.xipos[b];
    }
    for (int b = 1; b < m.nbody; ++b) {
      const int r = m.body_fusedid[b];
      point[b] = mass[r] >= 1e-15 ? Vec3(moment[r] / mass[r]) : p.xpos[r];
    }
  }
  for (int b = 1; b < m.nbody; ++b) {
    Eigen::MatrixXd jt = Eigen::MatrixXd::Zero(nv, 6);
    int last = -1;  // last dof moving b: its own or its nearest moving ancestor's
    for (int a = b; a > 0 && last < 0; a = m.body_parentid[a])
      if (m.body_dofnum[a] > 0) last = m.body_dofadr[a] + m.body_dofnum[a] - 1;
    for (int d = last; d >= 0; d = m.dof_parentid[d]) {
      Vec3 ang, lin;
      dof_motion(m, p, d, point[b], ang, lin);
      jt.block<1, 3>(d, 0) = lin.transpose();
      jt.block<1, 3>(d, 3) = ang.transpose();
    }
    m.body_invweight0[2 * b] = mean_diag(llt, jt, 0, 3);
    m.body_invweight0[2 * b + 1] = mean_diag(llt, jt, 3, 3);
  }

  // Joints: unit rows; free joints average translation and rotation separately.
  const Eigen::MatrixXd eye = Eigen::MatrixXd::Identity(nv, nv);
  for (int j = 0; j < m.njnt; ++j) {
    const int a = m.jnt_dofadr[j];
    const JointType t = m.jnt_type[j];
    const int block = t == JointType::Free || t == JointType::Ball ? 3 : 1;
    const int n = t == JointType::Free ? 6 : block;
    for (int s = 0; s < n; s += block) {
      const double w = mean_diag(llt, eye, a + s, block);
      for (int k = 0; k < block; ++k) m.dof_invweight0[a + s + k] = w;
    }
  }

  // Fixed tendons: J = sum of coef * e_dof(joint).
  for (int t = 0; t < m.ntendon; ++t) {
    Eigen::MatrixXd jt = Eigen::MatrixXd::Zero(nv, 1);
    for (int w = m.tendon_adr[t]; w < m.tendon_adr[t] + m.tendon_num[t]; ++w)
      jt(m.jnt_dofadr[m.wrap_jntid[w]], 0) += m.wrap_coef[w];
    m.tendon_invweight0[t] = mean_diag(llt, jt, 0, 1);
  }
}

}  // namespace stiffgrad
