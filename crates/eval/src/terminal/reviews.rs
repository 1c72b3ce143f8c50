//! The `reviews list` table: one line per logged review.

use std::fmt::Write as _;

use jevjudge_store::Review;

/// One line per review: received, id, status (with its detail), definition version, caller
/// reference, elapsed milliseconds and model (`-` when absent).
pub fn reviews(reviews: &[Review]) -> String {
    let mut out = String::new();
    for review in reviews {
        let detail = review.detail.as_deref().unwrap_or("");
        let _ = writeln!(
            out,
            "{}  {}  {:<12} {:<24} {:<20} {:>9.1} ms  {}",
            review.received_at,
            review.review_id,
            if detail.is_empty() {
                review.status.clone()
            } else {
                format!("{}/{detail}", review.status)
            },
            review.definition_version,
            review.reference.as_deref().unwrap_or("-"),
            review.elapsed_millis,
            review.model.as_deref().unwrap_or("-"),
        );
    }
    out
}

/// The line after a `reviews list` page: how many, and the cursor of the next page if any.
pub fn page_footer(count: usize, next_cursor: Option<&str>) -> String {
    let count = crate::plural::count(count, "review");
    match next_cursor {
        Some(cursor) => format!("{count}; more with --cursor {cursor}"),
        None => format!("{count}; no more"),
    }
}

/// What `reviews export --labelled` wrote: the two files with their counts, what was left
/// out, and the reviewers' agreement figures, one a line.
pub fn labelled_export(exported: &crate::export::LabelledExported) -> Option<String> {
    let (cases_path, records_path) = exported.files.as_ref()?;
    let mut text = format!(
        "{}: {}\n{}: {}\n{}\n",
        cases_path.display(),
        crate::plural::count(exported.cases, "case"),
        records_path.display(),
        crate::plural::count(exported.records, "record"),
        exported.left_out
    );
    for figure in &exported.agreement {
        let _ = writeln!(text, "{figure}");
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(status: &str, detail: Option<&str>, reference: Option<&str>) -> Review {
        Review {
            review_id: "0190a5c4-7b1e-7000-8000-000000000001".parse().unwrap(),
            received_at: "2026-01-02T03:04:05.678Z".to_owned(),
            definition_version: "v1".to_owned(),
            definition_digest: "sha256:d".to_owned(),
            state_digest: "sha256:s".to_owned(),
            reference: reference.map(str::to_owned),
            status: status.to_owned(),
            error: String::new(),
            detail: detail.map(str::to_owned),
            findings: serde_json::Value::Null,
            model: None,
            usage: None,
            elapsed_millis: 12.34,
            request_id: "r".to_owned(),
            backend: "fake".to_owned(),
            state_kept: false,
            state_erased_at: None,
            shadow_of: None,
            route: None,
        }
    }

    #[test]
    fn each_review_is_one_aligned_line_with_dashes_for_what_is_absent() {
        let text = reviews(&[
            review("PASS", None, Some("ticket-1")),
            review("ERROR", Some("timeout"), None),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "2026-01-02T03:04:05.678Z  0190a5c4-7b1e-7000-8000-000000000001  PASS         \
                 v1                       ticket-1                  12.3 ms  -",
                "2026-01-02T03:04:05.678Z  0190a5c4-7b1e-7000-8000-000000000001  ERROR/timeout \
                 v1                       -                         12.3 ms  -",
            ]
        );
        assert!(text.ends_with('\n'));
        assert_eq!(reviews(&[]), "");
    }

    #[test]
    fn a_page_footer_counts_the_reviews_and_gives_the_next_cursor() {
        assert_eq!(page_footer(1, None), "1 review; no more");
        assert_eq!(
            page_footer(50, Some("c1.abc")),
            "50 reviews; more with --cursor c1.abc"
        );
    }
}
