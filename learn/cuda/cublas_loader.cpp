// cuBLAS loaded at its first use (learn/cuda/cublas_loader.hpp says why).
#include "learn/cuda/cublas_loader.hpp"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace stiffgrad::learn {

namespace {

#define SG_STRINGIZE_(x) #x
#define SG_STRINGIZE(x) SG_STRINGIZE_(x)

template <class F>
void resolve(void* lib, const char* name, F* out) {
  void* f = dlsym(lib, name);
  if (!f) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("cuBLAS: ") + cublas_library_name() + " has no " + name +
                             ": " + (why ? why : "symbol not found"));
  }
  *out = reinterpret_cast<F>(f);
}

CublasApi load() {
  // the soname (the loader's cache, the library path), else the toolkit the build used
  void* lib = dlopen(cublas_library_name(), RTLD_NOW | RTLD_LOCAL);  // kept open for the process
#ifdef STIFFGRAD_CUBLAS_DIR
  if (!lib)
    lib = dlopen((std::string(STIFFGRAD_CUBLAS_DIR) + "/" + cublas_library_name()).c_str(),
                 RTLD_NOW | RTLD_LOCAL);
#endif
  if (!lib) {
    const char* why = dlerror();
    throw std::runtime_error(std::string("cuBLAS: cannot load ") + cublas_library_name() + ": " +
                             (why ? why : "unknown error") +
                             " (the CUDA toolkit's lib64 must be on the library path)");
  }
  CublasApi api{};
  resolve(lib, "cublasCreate_v2", &api.create);
  resolve(lib, "cublasDestroy_v2", &api.destroy);
  resolve(lib, "cublasSetStream_v2", &api.set_stream);
  resolve(lib, "cublasSgemm_v2", &api.sgemm);
  return api;
}

}  // namespace

const char* cublas_library_name() { return "libcublas.so." SG_STRINGIZE(CUBLAS_VER_MAJOR); }

const CublasApi& cublas_api() {
  static std::once_flag once;
  static CublasApi api{};
  std::call_once(once,
                 [] { api = load(); });  // a throw leaves the flag unset: the next call retries
  return api;
}

}  // namespace stiffgrad::learn
