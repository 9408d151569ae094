//! Programs: source and the build state per device.

use std::sync::Arc;

use opencl_sys::*;
use parking_lot::Mutex;

use super::context::Context;
use crate::api::icd::{Base, ClObject, Kind};

pub struct BuildState {
    pub status: cl_build_status,
    pub options: String,
    pub log: String,
}

#[repr(C)]
pub struct Program {
    pub base: Base,
    pub context: Arc<Context>,
    pub source: String,
    pub build: Mutex<BuildState>,
}

impl ClObject for Program {
    const KIND: Kind = Kind::Program;
    const INVALID: cl_int = CL_INVALID_PROGRAM;
    fn base(&self) -> &Base {
        &self.base
    }
}

impl Program {
    pub fn from_source(context: Arc<Context>, source: String) -> Arc<Program> {
        Arc::new(Program {
            base: Base::new(),
            context,
            source,
            build: Mutex::new(BuildState { status: CL_BUILD_NONE, options: String::new(), log: String::new() }),
        })
    }
}
