// stiffgrad — umbrella header of the learning library (target stiffgrad::stiffgrad_learn):
// networks, optimizers, normalizers, tasks, SHAC / SHAC+BCG / PPO, the ADD reward, policy files.
#pragma once
#include "stiffgrad/learn/add.hpp"
#include "stiffgrad/learn/gaussian.hpp"
#include "stiffgrad/learn/mlp.hpp"
#include "stiffgrad/learn/normalizer.hpp"
#include "stiffgrad/learn/optim.hpp"
#include "stiffgrad/learn/policy_file.hpp"
#include "stiffgrad/learn/task.hpp"
#include "stiffgrad/learn/train.hpp"
