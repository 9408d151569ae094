//! Host-API tests of FerroCL through the system ICD loader: every entry point of the
//! foundation with good and bad input, and every byte each transfer command moves.

#[macro_use]
mod common;
mod archive;
mod async_copies;
mod buffers;
mod builtins;
mod clang_tools;
mod command_buffers;
mod contexts;
mod cross_cpu;
mod device_enqueue;
mod events;
mod handles;
mod hostile;
mod images;
mod kernels;
mod opencl_c2;
mod pipes;
mod platform;
mod programs;
mod queues;
mod spirv;
mod sub_devices;
mod svm;
mod transfers;
mod usm;
mod validation;
