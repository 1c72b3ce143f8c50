//! What the commands print on a terminal, as plain text: the `eval`/`report` summary with its
//! risk and repeat tables ([`summary`]), the `compare` summary ([`compare`]) and the
//! `calibrate` summary with one block per criterion ([`calibration`]) and the `reviews list`
//! table ([`reviews`]).
//!
//! Each renderer is a pure function of the library's values (a [`crate::Report`], a
//! [`crate::compare::Comparison`], a [`crate::calibration::Calibration`]), so it is tested
//! directly, with snapshots, instead of through the binary.

mod calibrate;
mod compare;
mod ending;
mod hints;
mod reviews;
mod summary;
#[cfg(test)]
mod tests;

pub use calibrate::{calibration, criterion_block};
pub use compare::{compare, compare_with_gates};
pub use ending::{Ending, ending, stop_line};
pub use hints::{HintContext, error_hint};
pub use reviews::{labelled_export, page_footer, reviews};
pub use summary::{risk_table, summary};

/// The width of a table's scope column: the longest scope name, at least `overall`'s 7 and at
/// most 40 characters.
pub fn scope_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names
        .map(|name| name.chars().count())
        .chain([7])
        .max()
        .unwrap_or(7)
        .min(40)
}
