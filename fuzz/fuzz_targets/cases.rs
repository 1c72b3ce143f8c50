//! Cases files (cli-and-formats.md §2.2): every line is a case or an error, never a panic; a
//! parsed case yields a state (the evaluator form's three keys, or the state form's state).
#![no_main]

use jevjudge_eval::parse_case;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Ok(case) = parse_case(line) {
            // The request the evaluator would review, and the Debug form (no text, D12).
            let _ = case.input.to_state();
            let _ = format!("{case:?}");
        }
    }
});
