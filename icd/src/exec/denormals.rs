//! `-cl-denorms-are-zero`: the groups of a program built with it run with the CPU
//! flushing denormal results and inputs to zero (x86: MXCSR's FTZ and DAZ bits), as the
//! option allows for single and double precision; clang's `denormal-fp-math` attribute
//! alone changes only constant folding. The mode is per thread, so it is set around
//! each group on the worker running it (fibers of a group share that thread).

/// Flush-to-zero (bit 15) and denormals-are-zero (bit 6).
#[cfg(target_arch = "x86_64")]
const FTZ_DAZ: u32 = (1 << 15) | (1 << 6);

/// Flushes denormals on this thread while alive; restores the previous mode on drop.
pub(crate) struct FlushDenormals {
    #[cfg(target_arch = "x86_64")]
    saved: u32,
}

#[cfg(target_arch = "x86_64")]
fn mxcsr() -> u32 {
    let mut v: u32 = 0;
    // SAFETY: stmxcsr stores the 32-bit control register to the given address, a live local.
    unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack, preserves_flags)) };
    v
}

#[cfg(target_arch = "x86_64")]
fn set_mxcsr(v: u32) {
    // SAFETY: ldmxcsr loads a control word taken from stmxcsr with only FTZ/DAZ changed,
    // which are valid on every x86-64 CPU with SSE2.
    unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &v, options(nostack, preserves_flags, readonly)) };
}

impl FlushDenormals {
    pub(crate) fn begin() -> FlushDenormals {
        #[cfg(target_arch = "x86_64")]
        {
            let saved = mxcsr();
            set_mxcsr(saved | FTZ_DAZ);
            FlushDenormals { saved }
        }
        #[cfg(not(target_arch = "x86_64"))]
        FlushDenormals {}
    }
}

impl Drop for FlushDenormals {
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        set_mxcsr(self.saved);
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn flushes_while_alive_and_restores() {
        let tiny = std::hint::black_box(f32::MIN_POSITIVE);
        let before = mxcsr();
        {
            let _f = FlushDenormals::begin();
            assert_eq!(std::hint::black_box(tiny) * std::hint::black_box(0.5), 0.0);
        }
        assert_eq!(mxcsr(), before);
        assert_eq!(std::hint::black_box(tiny) * std::hint::black_box(0.5), f32::MIN_POSITIVE / 2.0);
    }
}
