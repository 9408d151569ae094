//! OpenCL C builtins for FerroCL kernels, exported under clang's mangled names and
//! linked into each kernel's shared object.
