//! `cargo fuzz run parse` (from syntax/): any UTF-8 input parses without panicking, round-trips,
//! and reports errors inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        wsp_syntax::check_invariants(text);
    }
});
