//! `.jevl` records (systemone-wire.md §15): every line is a record or an error, never a
//! panic; a record written back with `to_line` reads back equal, and a set of records indexes
//! for replay without panicking.
#![no_main]

use jevjudge_wire::record::{ReplayIndex, parse_line};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut records = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(record) = parse_line(line) else {
            continue;
        };
        if let Ok(written) = record.to_line() {
            let again = parse_line(&written).expect("a written record reads back");
            assert_eq!(
                again, record,
                "to_line/parse_line round trip changed the record"
            );
        }
        records.push(record);
    }
    if let Ok(index) = ReplayIndex::from_records(records) {
        let _ = index.len();
    }
});
