//! A count of the steps of the loops over a whole file's items and diagnostics: each step is
//! one item visited, one name or item looked up, one diagnostic placed. tests/scaling.rs checks
//! that it grows linearly with the number of statements. Counting steps rather than timing
//! keeps that test deterministic; a scan nested in a loop over items shows as steps squared.

use std::sync::atomic::{AtomicU64, Ordering};

static STEPS: AtomicU64 = AtomicU64::new(0);

/// Counts `n` steps.
pub(crate) fn step(n: usize) {
    STEPS.fetch_add(n as u64, Ordering::Relaxed);
}

/// The steps counted since the process started.
pub fn steps() -> u64 {
    STEPS.load(Ordering::Relaxed)
}
