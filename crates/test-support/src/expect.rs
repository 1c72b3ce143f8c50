//! Assertions on what a finished program did, whose failures show what it said: one copy of
//! the `assert_eq!(output.status.code(), …, "{}", stderr(&output))` and
//! `assert!(text.contains(…), "{}", text)` pairs that test files used to spell out each time.

use std::process::Output;

use crate::{stderr, stdout};

/// Asserts that `output` exited with `code`; a failure shows both streams.
#[track_caller]
pub fn exit_code(output: &Output, code: i32) {
    exit_code_of("", output, code);
}

/// [`exit_code`] for one row of a table-driven test: a failure names `case` first.
#[track_caller]
pub fn exit_code_of(case: &str, output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "{case}\nstderr: {}\nstdout: {}",
        stderr(output),
        stdout(output)
    );
}

/// Asserts that `text` contains `needle`; a failure shows both.
#[track_caller]
pub fn contains(text: &str, needle: &str) {
    contains_of("", text, needle);
}

/// [`contains`] for one row of a table-driven test: a failure names `case` first.
#[track_caller]
pub fn contains_of(case: &str, text: &str, needle: &str) {
    assert!(
        text.contains(needle),
        "{case}\n{needle:?} is not in: {text}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(code: i32) -> Output {
        crate::run_blocking(crate::command("sh").args(["-c", &format!("echo said; exit {code}")]))
    }

    #[test]
    fn a_matching_exit_code_and_needle_pass() {
        let output = finished(3);
        exit_code(&output, 3);
        exit_code_of("row", &output, 3);
        contains(&stdout(&output), "said");
        contains_of("row", &stdout(&output), "said");
    }

    #[test]
    #[should_panic(expected = "row 7\nstderr: \nstdout: said")]
    fn another_exit_code_fails_naming_the_case_and_the_streams() {
        exit_code_of("row 7", &finished(1), 0);
    }

    #[test]
    #[should_panic(expected = "\"absent\" is not in: present")]
    fn a_missing_needle_fails_showing_the_text() {
        contains("present", "absent");
    }

    #[test]
    #[should_panic(expected = "row 2\n\"absent\" is not in: present")]
    fn a_missing_needle_in_a_row_fails_naming_it() {
        contains_of("row 2", "present", "absent");
    }
}
