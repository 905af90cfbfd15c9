{
  # CPU build of chronoql_native (node-gyp). The CUDA-enabled build of the same
  # sources is CMakeLists.txt (cmake-js, output in build-cuda/).
  "targets": [
    {
      "target_name": "chronoql_native",
      "sources": [
        "native/addon/addon.cpp",
        "native/core/classifier.cpp",
        "native/core/cpu_search.cpp",
        "native/core/fusion.cpp",
        "native/core/simd.cpp",
        "native/core/simd_avx2.cpp",
        "native/core/thread_pool.cpp",
        "native/core/vector_index.cpp",
        "native/core/vector_store.cpp",
        "native/cuda/cuda_backend_stub.cpp"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      # Baseline x86-64 code: AVX2/FMA/F16C kernels carry function-level target
      # attributes and are chosen at run time (native/core/simd.cpp).
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-frtti", "-Wall", "-Wextra", "-Wno-unused-parameter", "-pthread"],
      "ldflags": ["-pthread"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "MACOSX_DEPLOYMENT_TARGET": "11.0"
      }
    }
  ]
}
