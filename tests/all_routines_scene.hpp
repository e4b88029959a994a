// A scene in which every narrow-phase routine (kernels/collision/collision.hpp PairRoutine) has a
// candidate pair in contact, shared by the staged-step tests on the host and on the GPU.
#pragma once

namespace sgtest {

// Every narrow-phase routine at least once: a plane and free bodies packed so that they touch
// each other and the floor.
inline const char* kAllRoutinesXml = R"(
<mujoco model="all routines">
  <option timestep="0.004"/>
  <asset>
    <mesh name="gem" vertex="0.15 0 0  -0.14 0.01 0  0 0.12 0  0.01 -0.11 0  0 0 0.1  0.01 0.01 -0.1
                             0.08 0.07 0.06  -0.07 -0.06 -0.05  0.07 -0.06 -0.06"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body pos="0 0 0.12"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body pos="0.19 0 0.12"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body pos="0.05 0.17 0.1" euler="0 90 0"><freejoint/><geom type="capsule" size="0.08 0.15"/></body>
    <body pos="0.05 0.32 0.1" euler="0 90 0"><freejoint/><geom type="capsule" size="0.08 0.15"/></body>
    <body pos="0.35 0.1 0.12"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="0.35 0.1 0.33" euler="0 0 30"><freejoint/><geom type="box" size="0.1 0.08 0.1"/></body>
    <body pos="-0.2 0.1 0.1"><freejoint/><geom type="ellipsoid" size="0.1 0.07 0.09"/></body>
    <body pos="-0.2 -0.1 0.1"><freejoint/><geom type="cylinder" size="0.08 0.1"/></body>
    <body pos="0.35 -0.12 0.1" euler="30 0 0"><freejoint/><geom type="cylinder" size="0.07 0.1"/></body>
    <body pos="-0.41 -0.1 0.095" euler="0 0 10"><freejoint/><geom type="mesh" mesh="gem"/></body>
  </worldbody>
</mujoco>)";

}  // namespace sgtest
