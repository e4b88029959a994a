#include "core/model_arrays_impl.hpp"

namespace stiffgrad {

template class ModelArrays<float>;
template class ModelArrays<double>;

}  // namespace stiffgrad
