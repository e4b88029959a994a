// stiffgrad — model constants that depend on the mass matrix at qpos0.
#pragma once

#include "stiffgrad/model.hpp"

namespace stiffgrad {

// Fills body_invweight0, dof_invweight0, tendon_invweight0 and stat_meaninertia as MuJoCo
// 2.2.2's mj_setConst does (engine_setconst.c; facts §4): the diagonal of J M^-1 J^T at qpos0
// for each body's centre-of-mass Jacobian (means of the translational and of the rotational
// three), for each joint's dofs (block means for ball and free joints) and for each tendon;
// meaninertia = mean of diag(M). Needs every kinematic and inertial field of the model.
void set_constants(Model& m);
// The second anchor of every connect equality (eq_data[3..5]: the anchor in body2's frame at
// qpos0), as mj_setConst sets it; set_constants calls it.
void set_equality_anchors(Model& m);

}  // namespace stiffgrad
