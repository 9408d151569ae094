//! API sequences on random, stale, foreign and garbage handles (see `ferrocl_fuzz::api`).
#![no_main]

use ferrocl_fuzz::api::{Op, Session};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|ops: Vec<Op>| {
    Session::new().run(&ops);
});
