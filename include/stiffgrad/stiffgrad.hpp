// stiffgrad — umbrella header.
#pragma once
#include "stiffgrad/dynamics.hpp"
#include "stiffgrad/mjcf.hpp"
#include "stiffgrad/model.hpp"
#include "stiffgrad/contacts_from_distance.hpp"
#include "stiffgrad/impulse_contact.hpp"
#include "stiffgrad/simulator.hpp"
#include "stiffgrad/states_csv.hpp"
#include "stiffgrad/bundle.hpp"
#include "stiffgrad/rollout.hpp"
#include "stiffgrad/gradcheck.hpp"
#include "stiffgrad/sampling.hpp"
