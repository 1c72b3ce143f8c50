//! Checking that a text (a page, a header, a document) holds several pieces at once.

/// Asserts that `text` contains every one of `needles`; the panic names the missing piece
/// and shows the text.
#[track_caller]
pub fn assert_contains_all(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` missing in: {text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_must_be_there() {
        assert_contains_all("a; HttpOnly; Path=/ui", &["; HttpOnly", "; Path=/ui"]);
        let missing =
            std::panic::catch_unwind(|| assert_contains_all("a; HttpOnly", &["; Secure"]));
        assert!(missing.is_err());
    }
}
