//! A count of the steps of the loops over a whole file's items and diagnostics: each step is
//! one item visited, one name or item looked up, one diagnostic placed. analysis/tests/scaling.rs checks
//! that it grows linearly with the number of statements. Counting steps rather than timing
//! keeps that test deterministic; a scan nested in a loop over items shows as steps squared.
//!
//! The count is per thread, so counting costs a plain add on each step: a shared atomic would
//! make every checking thread of a many-core machine contend for one cache line.

use std::cell::Cell;

thread_local! {
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// Counts `n` steps.
pub(crate) fn step(n: usize) {
    STEPS.with(|s| s.set(s.get() + n as u64));
}

/// The steps counted on this thread since it started (queries run on the thread that asks).
pub fn steps() -> u64 {
    STEPS.with(Cell::get)
}
