//! Counts in English: `1 review`, `2 reviews`, `0 reviews`.

use std::fmt::Display;

/// `singular` when `n` is one, else `singular` + `s`: the noun that follows the number `n`.
pub fn noun<N: PartialEq + From<u8>>(n: N, singular: &str) -> String {
    if n == N::from(1) {
        singular.to_owned()
    } else {
        format!("{singular}s")
    }
}

/// `n` and its noun: `1 row`, `10 rows`.
pub fn count<N: PartialEq + From<u8> + Display>(n: N, singular: &str) -> String {
    let text = n.to_string();
    format!("{text} {}", noun(n, singular))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_takes_the_singular_and_every_other_count_the_plural() {
        assert_eq!(count(1u64, "review"), "1 review");
        assert_eq!(count(0u64, "review"), "0 reviews");
        assert_eq!(count(2usize, "row"), "2 rows");
        assert_eq!(count(150u32, "case"), "150 cases");
        assert_eq!(noun(1u8, "error"), "error");
        assert_eq!(noun(11usize, "error"), "errors");
    }
}
