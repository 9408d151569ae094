//! SPIR-V modules, damaged or raw, with specialization constants, built, compiled and
//! linked (see `ferrocl_fuzz::il`).
#![no_main]

use ferrocl_fuzz::il::Input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: Input| {
    input.run();
});
