// cuBLAS loaded at its first use (dlopen), not linked: linking libcublas made every process that
// links the learning library (the command line, every test) run cuBLAS's static initializers at
// start, 0.45–0.5 s on the 2-core CI machine whether or not it used the GPU (measured 2026-12-08:
// an empty program linked with -lcublas took 0.50 s to start against 0.008 s with -lcudart alone;
// each of the suite's 651 test processes paid it). MlpDevice (mlp_device.cu) calls the four
// functions it needs through CublasApi. The header needs cuBLAS's headers only, for the types.
#pragma once

#include <cublas_v2.h>

namespace stiffgrad::learn {

struct CublasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSgemm_v2) sgemm;
};

// The library's soname, libcublas.so.<major> of the headers this was built with.
const char* cublas_library_name();
// cuBLAS's functions, loaded once (thread-safe); throws std::runtime_error naming the library and
// dlerror() when it cannot be loaded or lacks a function.
const CublasApi& cublas_api();

}  // namespace stiffgrad::learn
