//! Rich outputs: MIME bundles with a text/plain fallback for run stats, the simulated
//! timeline and tensors.
