#include "stiffgrad/contacts_from_distance.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/number_list.hpp"

namespace stiffgrad {

Model contacts_from_distance_model(const Model& model, const ContactsFromDistance& c) {
  if (!(c.width > 0)) throw std::invalid_argument("contacts from distance: width must be > 0");
  if (!(c.d0 >= 0 && c.d0 < 1) || !(c.dwidth >= 0 && c.dwidth < 1))
    throw std::invalid_argument("contacts from distance: d0 and dwidth must lie in [0, 1)");
  if (!(c.mid >= 0 && c.mid <= 1)) throw std::invalid_argument("contacts from distance: mid must lie in [0, 1]");
  if (!(c.power >= 1)) throw std::invalid_argument("contacts from distance: power must be >= 1");
  Model m = model;
  for (int p = 0; p < m.ncpair; ++p) {
    m.cpair_margin[p] = std::max(m.cpair_margin[p], c.width);
    double* s = m.cpair_solimp.data() + 5 * p;
    s[0] = c.d0;
    s[1] = c.dwidth;
    s[2] = c.width;
    s[3] = c.mid;
    s[4] = c.power;
  }
  return m;
}

ContactsFromDistance parse_contacts_from_distance(const std::string& text) {
  const std::vector<double> v = parse_number_list(text, "--cfd");
  if (v.size() != 5) throw std::invalid_argument("--cfd takes five numbers D0,DWIDTH,WIDTH,MID,POWER");
  ContactsFromDistance c;
  c.enabled = true;
  c.d0 = v[0];
  c.dwidth = v[1];
  c.width = v[2];
  c.mid = v[3];
  c.power = v[4];
  contacts_from_distance_model(Model{}, c);  // validates
  return c;
}

}  // namespace stiffgrad
