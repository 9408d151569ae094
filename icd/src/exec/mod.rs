//! Running kernels: a pool of pinned workers takes work-groups of an NDRange
//! (`pool`), each group runs as a loop over work-items or, when the kernel has
//! barriers, as fibers (`fibers`); `ndrange` ties them to a launch.

pub mod fibers;
pub mod ndrange;
pub mod pool;
