//! Program binaries, damaged or raw, built, compiled and linked with fuzzed options
//! (see `ferrocl_fuzz::binary`).
#![no_main]

use ferrocl_fuzz::binary::Input;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: Input| {
    input.run();
});
