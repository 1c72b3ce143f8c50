//! The pages, templated with maud from plain data: every string is escaped by the template,
//! nothing from a state, a definition or a note is ever markup. The only files the pages load
//! are `/ui/static/style.css` and `/ui/static/keys.js` (the CSP allows nothing else).

use maud::{DOCTYPE, Markup, html};
use serde_json::Value;

/// The signed-in reviewer, as the header shows them.
pub(crate) struct Who<'a> {
    pub(crate) name: &'a str,
    pub(crate) csrf: &'a str,
}

/// One row of the queue page.
pub(crate) struct QueueRow {
    pub(crate) item: String,
    pub(crate) version: String,
    pub(crate) slot: u8,
    pub(crate) age: String,
    pub(crate) claimed_by: Option<String>,
}

/// An item the reviewer holds, as the queue page links it.
pub(crate) struct HeldRow {
    /// The page of the item (`/ui/items/…` or `/ui/adjudications/…`).
    pub(crate) href: String,
    pub(crate) item: String,
    pub(crate) adjudication: bool,
    pub(crate) version: String,
    /// When the lease ends, RFC 3339 UTC (the page's script shows it in local time).
    pub(crate) lease_expires: String,
}

/// One of the reviewer's own decisions on the queue page.
pub(crate) struct HistoryRow {
    pub(crate) href: String,
    pub(crate) item: String,
    pub(crate) adjudication: bool,
    pub(crate) version: String,
    pub(crate) decided_at: String,
}

/// The queue page.
pub(crate) struct QueueView<'a> {
    pub(crate) who: Who<'a>,
    /// The items the reviewer holds.
    pub(crate) held: Vec<HeldRow>,
    /// The reviewer's latest decisions, newest first.
    pub(crate) history: Vec<HistoryRow>,
    /// For a lead: how many adjudications wait.
    pub(crate) adjudications_pending: Option<u64>,
    pub(crate) pending_by_version: Vec<(String, u64)>,
    pub(crate) claimed: u64,
    pub(crate) decided: u64,
    pub(crate) version: Option<&'a str>,
    pub(crate) rows: Vec<QueueRow>,
    /// The query string of the next page, when there is one.
    pub(crate) next: Option<String>,
    pub(crate) message: Option<&'a str>,
}

/// One criterion on the item page.
pub(crate) struct CriterionView {
    pub(crate) id: String,
    pub(crate) instructions: String,
    /// The answer given so far (when the form comes back with an error).
    pub(crate) answer: Option<Answer>,
}

/// A reviewer's answer to one criterion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The condition holds.
    Holds,
    /// The condition does not hold.
    DoesNotHold,
    /// The reviewer can't tell.
    CantTell,
}

impl Answer {
    /// The form value.
    pub(crate) fn value(self) -> &'static str {
        match self {
            Answer::Holds => "holds",
            Answer::DoesNotHold => "not",
            Answer::CantTell => "cant",
        }
    }

    /// The answer a form value names.
    pub(crate) fn parse(value: &str) -> Option<Answer> {
        [Answer::Holds, Answer::DoesNotHold, Answer::CantTell]
            .into_iter()
            .find(|answer| answer.value() == value)
    }

    /// What the store records: true, false or null.
    pub(crate) fn finding(self) -> Option<bool> {
        match self {
            Answer::Holds => Some(true),
            Answer::DoesNotHold => Some(false),
            Answer::CantTell => None,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Answer::Holds => "holds",
            Answer::DoesNotHold => "does not hold",
            Answer::CantTell => "can't tell",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Answer::Holds => "1",
            Answer::DoesNotHold => "2",
            Answer::CantTell => "3",
        }
    }
}

/// The item page: the claimed item, blind (no verdict, no probability).
pub(crate) struct ItemView<'a> {
    pub(crate) who: Who<'a>,
    pub(crate) item: String,
    pub(crate) version: String,
    pub(crate) state: Option<&'a Value>,
    pub(crate) criteria: Vec<CriterionView>,
    pub(crate) note: String,
    pub(crate) lease_expires: String,
    pub(crate) error: Option<String>,
}

/// One criterion on the result page: the reviewer's answer beside Jev's.
pub(crate) struct ResultRow {
    pub(crate) id: String,
    pub(crate) instructions: String,
    /// The reviewer's finding: holds, does not hold, or can't tell (None).
    pub(crate) reviewer: Option<bool>,
    /// Jev's criterion status (PASS, FAIL, INCONCLUSIVE, ERROR), when the review has one.
    pub(crate) jev_status: Option<String>,
    /// Jev's probability that the condition holds.
    pub(crate) jev_probability: Option<f64>,
}

/// The result page, shown once the decision is saved.
pub(crate) struct ResultView<'a> {
    pub(crate) who: Who<'a>,
    pub(crate) item: String,
    pub(crate) version: String,
    pub(crate) review_status: String,
    pub(crate) rows: Vec<ResultRow>,
    pub(crate) note: Option<String>,
}

fn layout(title: &str, who: Option<&Who<'_>>, script: bool, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · jevjudge review" }
                link rel="stylesheet" href="/ui/static/style.css";
                link rel="icon" href="/ui/static/icon.svg" type="image/svg+xml";
                @if script { script src="/ui/static/keys.js" defer {} }
            }
            body {
                header.top {
                    a.brand href="/ui/" { "jevjudge review" }
                    @if let Some(who) = who {
                        span.who { "signed in as " strong { (who.name) } }
                        form.inline method="post" action="/ui/sign-out" {
                            input type="hidden" name="csrf" value=(who.csrf);
                            button.link type="submit" { "Sign out" }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// The sign-in page.
pub(crate) fn sign_in(csrf: &str, error: Option<&str>) -> Markup {
    layout(
        "Sign in",
        None,
        false,
        html! {
            h1 { "Sign in" }
            @if let Some(error) = error { p.error role="alert" { (error) } }
            form.card method="post" action="/ui/sign-in" autocomplete="off" {
                input type="hidden" name="csrf" value=(csrf);
                label for="token" { "Reviewer token" }
                input #token type="password" name="token" required autofocus;
                button type="submit" { "Sign in" }
            }
            p.note { "The token is the one your operator gave you for the review queue. The session lasts 8 hours, in a cookie only this site's /ui pages receive." }
        },
    )
}

/// The queue page counts the oldest this many pending items, and decisions up to this many
/// (`Store::queue_counts_capped`): an exact count reads every open item, and the page is
/// loaded often.
pub(crate) const COUNT_CAP: u64 = 10_000;

/// A count as text: `N+` when it is a lower bound.
pub(crate) fn count_text(n: u64, lower_bound: bool) -> String {
    if lower_bound {
        format!("{n}+")
    } else {
        n.to_string()
    }
}

/// The queue page.
pub(crate) fn queue(view: &QueueView<'_>) -> Markup {
    let total: u64 = view.pending_by_version.iter().map(|(_, n)| n).sum();
    // The pending figures reached the cap: each is "or more".
    let capped = total >= COUNT_CAP;
    layout(
        "Queue",
        Some(&view.who),
        true,
        html! {
            h1 { "Review queue" }
            @if let Some(message) = view.message { p.message role="status" { (message) } }
            div.cards {
                div.card { div.figure { (count_text(total, capped)) } div.label { "pending" } }
                div.card { div.figure { (count_text(view.claimed, false)) } div.label { "claimed" } }
                div.card { div.figure { (count_text(view.decided, view.decided >= COUNT_CAP)) } div.label { "decided" } }
            }
            @if !view.held.is_empty() {
                h2 { "Your items" }
                p.note { "Held by you until the time shown; claiming hands these back first." }
                table.held {
                    thead { tr { th { "Item" } th { "Kind" } th { "Version" } th { "Yours until" } } }
                    tbody {
                        @for row in &view.held {
                            tr {
                                td { a.held href=(row.href) { code { (short(&row.item)) } } }
                                td { @if row.adjudication { "adjudication" } @else { "review" } }
                                td { code { (row.version) } }
                                td { (local_time(&row.lease_expires)) }
                            }
                        }
                    }
                }
            }
            @if let Some(pending) = view.adjudications_pending {
                form.card.claim method="post" action="/ui/adjudications/claim" {
                    input type="hidden" name="csrf" value=(view.who.csrf);
                    span { strong { (pending) } " adjudications pending" }
                    button type="submit" { "Claim adjudication" }
                }
            }
            form.card.claim #claim method="post" action="/ui/claim" {
                input type="hidden" name="csrf" value=(view.who.csrf);
                label for="version" { "Definition version" }
                select #version name="version" {
                    option value="" selected[view.version.is_none()] { "any (oldest first)" }
                    @for (version, pending) in &view.pending_by_version {
                        option value=(version) selected[view.version == Some(version.as_str())] {
                            (version) " (" (count_text(*pending, capped)) " pending)"
                        }
                    }
                }
                button type="submit" { "Claim next" }
                @if !view.held.is_empty() {
                    button.secondary type="submit" name="new" value="1" { "Claim another" }
                }
                span.hint { "shortcut: " kbd { "c" } }
            }
            h2 { "Pending by version" }
            @if view.pending_by_version.is_empty() {
                p.note { "Nothing is pending." }
            } @else {
                table {
                    thead { tr { th { "Version" } th.num { "Pending" } th {} } }
                    tbody {
                        @for (version, pending) in &view.pending_by_version {
                            tr {
                                td { code { (version) } }
                                td.num { (count_text(*pending, capped)) }
                                td { a href={ "/ui/?version=" (urlencode(version)) } { "list" } }
                            }
                        }
                    }
                }
            }
            h2 {
                "Oldest first"
                @if let Some(version) = view.version { " · " code { (version) } " · " a href="/ui/" { "all versions" } }
            }
            @if view.rows.is_empty() {
                p.note { "No item on this page." }
            } @else {
                table.items {
                    thead { tr { th { "Item" } th { "Version" } th { "Review" } th { "Waiting" } th { "Held by" } } }
                    tbody {
                        @for row in &view.rows {
                            tr {
                                td { code { (short(&row.item)) } }
                                td { code { (row.version) } }
                                td { @if row.slot > 1 { "second" } @else { "first" } }
                                td { (row.age) }
                                td { @match &row.claimed_by { Some(name) => (name), None => span.muted { "—" } } }
                            }
                        }
                    }
                }
            }
            @if let Some(next) = &view.next { p { a.next href={ "/ui/?" (next) } { "Next page →" } } }
            @if !view.history.is_empty() {
                h2 { "Your latest decisions" }
                table.history {
                    thead { tr { th { "Item" } th { "Kind" } th { "Version" } th { "Decided" } } }
                    tbody {
                        @for row in &view.history {
                            tr {
                                td { a href=(row.href) { code { (short(&row.item)) } } }
                                td { @if row.adjudication { "adjudication" } @else { "review" } }
                                td { code { (row.version) } }
                                td { (local_time(&row.decided_at)) }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// An RFC 3339 UTC time as `<time>`: its time of day in UTC, which the page's script replaces
/// with the reader's local date and time.
pub(crate) fn local_time(rfc3339: &str) -> Markup {
    let shown = match rfc3339.get(11..19) {
        Some(time) => format!("{} {time} UTC", rfc3339.get(..10).unwrap_or_default()),
        None => rfc3339.to_owned(),
    };
    html! { time.local datetime=(rfc3339) { (shown) } }
}

/// A page about one queue item, for the signed-in reviewer (with the keyboard script): an
/// `h1` of `heading` and the item's short id, then `body`.
fn item_page(title: &str, heading: &str, who: &Who<'_>, item: &str, body: Markup) -> Markup {
    layout(
        title,
        Some(who),
        true,
        html! {
            h1 { (heading) code { (short(item)) } }
            (body)
        },
    )
}

/// The item page: the state as text, the criteria as questions, blind.
pub(crate) fn item(view: &ItemView<'_>) -> Markup {
    let action = format!("/ui/items/{}/decision", view.item);
    let release = format!("/ui/items/{}/release", view.item);
    item_page(
        "Item",
        "Item ",
        &view.who,
        &view.item,
        html! {
            p.meta {
                "Definition " code { (view.version) }
                " · yours until " (local_time(&view.lease_expires))
            }
            p.note { "Blind review: Jev's verdict and probabilities are shown once your decision is saved." }
            @if let Some(error) = &view.error { p.error role="alert" { (error) } }
            section.state {
                h2 { "State" }
                (state(view.state))
            }
            form #decision method="post" action=(action) {
                input type="hidden" name="csrf" value=(view.who.csrf);
                h2 { "Criteria" }
                @for (index, criterion) in view.criteria.iter().enumerate() {
                    fieldset.criterion tabindex="0" data-index=(index) {
                        legend { code { (criterion.id) } }
                        p.question { (criterion.instructions) }
                        div.answers {
                            @for answer in [Answer::Holds, Answer::DoesNotHold, Answer::CantTell] {
                                label {
                                    input type="radio" name={ "c." (criterion.id) } value=(answer.value())
                                        required checked[criterion.answer == Some(answer)];
                                    " " (answer.label()) " " kbd { (answer.key()) }
                                }
                            }
                        }
                    }
                }
                label for="note" { "Note (optional)" }
                textarea #note name="note" rows="3" maxlength="4000" { (view.note) }
                div.actions {
                    button type="submit" { "Save decision" }
                    span.hint { kbd { "Ctrl" } "+" kbd { "Enter" } }
                }
            }
            form.inline.release method="post" action=(release) {
                input type="hidden" name="csrf" value=(view.who.csrf);
                button.secondary type="submit" { "Release (give it back to the queue)" }
            }
            (shortcuts())
        },
    )
}

/// The result page: the reviewer's decision beside Jev's findings.
pub(crate) fn result(view: &ResultView<'_>) -> Markup {
    item_page(
        "Result",
        "Saved: item ",
        &view.who,
        &view.item,
        html! {
            p.meta { "Definition " code { (view.version) } " · Jev's verdict " strong { (view.review_status) } }
            table.result {
                thead { tr { th { "Criterion" } th { "You" } th { "Jev P(holds)" } th { "Jev status" } } }
                tbody {
                    @for row in &view.rows {
                        tr {
                            td { code { (row.id) } div.question { (row.instructions) } }
                            td { (match row.reviewer { Some(true) => "holds", Some(false) => "does not hold", None => "can't tell" }) }
                            td.num { @match row.jev_probability { Some(p) => (format!("{p:.3}")), None => span.muted { "—" } } }
                            td { @match &row.jev_status { Some(s) => (s), None => span.muted { "—" } } }
                        }
                    }
                }
            }
            @if let Some(note) = &view.note { h2 { "Your note" } p.text { (note) } }
            form #claim method="post" action="/ui/claim" {
                input type="hidden" name="csrf" value=(view.who.csrf);
                input type="hidden" name="version" value=(view.version);
                button type="submit" { "Claim next" }
                " "
                a href="/ui/" { "Back to the queue" }
            }
        },
    )
}

/// One reviewer's answers, in the page's criterion order, and their note.
pub(crate) struct AnswerColumn {
    pub(crate) name: String,
    pub(crate) findings: Vec<Option<bool>>,
    pub(crate) note: Option<String>,
}

/// A lead's adjudication page: both reviewers' answers and notes, never Jev's; the form
/// while undecided, the lead's decision once decided.
pub(crate) struct AdjudicationView<'a> {
    pub(crate) who: Who<'a>,
    pub(crate) item: String,
    pub(crate) version: String,
    pub(crate) disagreement: bool,
    pub(crate) state: Option<&'a Value>,
    pub(crate) criteria: Vec<CriterionView>,
    pub(crate) answers: Vec<AnswerColumn>,
    pub(crate) lease_expires: Option<String>,
    pub(crate) note: String,
    pub(crate) error: Option<String>,
    /// The lead's decision and whose it upheld, once decided.
    pub(crate) decided: Option<(AnswerColumn, String)>,
}

fn finding_text(finding: Option<bool>) -> &'static str {
    match finding {
        Some(true) => "holds",
        Some(false) => "does not hold",
        None => "can't tell",
    }
}

/// The adjudication page.
pub(crate) fn adjudication(view: &AdjudicationView<'_>) -> Markup {
    let action = format!("/ui/adjudications/{}/decision", view.item);
    let release = format!("/ui/adjudications/{}/release", view.item);
    let mut columns: Vec<&AnswerColumn> = view.answers.iter().collect();
    if let Some((lead, _)) = &view.decided {
        columns.push(lead);
    }
    item_page(
        "Adjudication",
        "Adjudication ",
        &view.who,
        &view.item,
        html! {
            p.meta {
                "Definition " code { (view.version) }
                " · " @if view.disagreement { "the reviewers disagree" } @else { "a reviewer could not tell" }
                @if let Some(lease) = &view.lease_expires { " · yours until " (local_time(lease)) }
            }
            p.note { "Both reviewers' answers and notes. Jev's verdict is not shown: your decision is the label." }
            @if let Some(error) = &view.error { p.error role="alert" { (error) } }
            section.state {
                h2 { "State" }
                (state(view.state))
            }
            h2 { "Answers" }
            table.both {
                thead { tr { th { "Criterion" } @for column in &columns { th { (column.name) } } } }
                tbody {
                    @for (index, criterion) in view.criteria.iter().enumerate() {
                        tr {
                            td { code { (criterion.id) } div.question { (criterion.instructions) } }
                            @for column in &columns {
                                td { (finding_text(column.findings.get(index).copied().flatten())) }
                            }
                        }
                    }
                    tr.notes {
                        td { "Note" }
                        @for column in &columns {
                            td { @match &column.note { Some(note) => span.text { (note) }, None => span.muted { "—" } } }
                        }
                    }
                }
            }
            @if let Some((_, upheld)) = &view.decided {
                p.message role="status" { "Decided: the label is your decision (upheld: " (upheld) ")." }
                p { a href="/ui/" { "Back to the queue" } }
            } @else {
                form #decision method="post" action=(action) {
                    input type="hidden" name="csrf" value=(view.who.csrf);
                    h2 { "Your decision" }
                    @for (index, criterion) in view.criteria.iter().enumerate() {
                        fieldset.criterion tabindex="0" data-index=(index) {
                            legend { code { (criterion.id) } }
                            p.question { (criterion.instructions) }
                            div.answers {
                                @for answer in [Answer::Holds, Answer::DoesNotHold, Answer::CantTell] {
                                    label {
                                        input type="radio" name={ "c." (criterion.id) } value=(answer.value())
                                            required checked[criterion.answer == Some(answer)];
                                        " " (answer.label()) " " kbd { (answer.key()) }
                                    }
                                }
                            }
                        }
                    }
                    label for="note" { "Note (optional)" }
                    textarea #note name="note" rows="3" maxlength="4000" { (view.note) }
                    div.actions {
                        button type="submit" { "Save decision" }
                        span.hint { kbd { "Ctrl" } "+" kbd { "Enter" } }
                    }
                }
                form.inline.release method="post" action=(release) {
                    input type="hidden" name="csrf" value=(view.who.csrf);
                    button.secondary type="submit" { "Release (give it back)" }
                }
                (shortcuts())
            }
        },
    )
}

/// A page for a refusal or a missing item.
pub(crate) fn message(who: Option<&Who<'_>>, title: &str, text: &str) -> Markup {
    layout(
        title,
        who,
        false,
        html! {
            h1 { (title) }
            p { (text) }
            p { a href="/ui/" { "Back to the queue" } }
        },
    )
}

fn shortcuts() -> Markup {
    html! {
        details.shortcuts open {
            summary { "Keyboard shortcuts" }
            dl {
                dt { kbd { "j" } " / " kbd { "k" } } dd { "next / previous criterion" }
                dt { kbd { "1" } " " kbd { "2" } " " kbd { "3" } } dd { "holds / does not hold / can't tell for the focused criterion (then the next one)" }
                dt { kbd { "n" } } dd { "write a note" }
                dt { kbd { "Ctrl" } "+" kbd { "Enter" } } dd { "save the decision (also " kbd { "Enter" } " outside the note)" }
                dt { kbd { "Esc" } } dd { "leave the note" }
            }
        }
    }
}

/// The state's fields: strings as text (line breaks kept), anything else as indented JSON.
fn state(state: Option<&Value>) -> Markup {
    html! {
        @match state {
            None => p.note { "The state was not kept (or has been erased): release the item." },
            Some(Value::Object(fields)) => {
                dl.fields {
                    @for (name, value) in fields {
                        dt { code { (name) } }
                        dd { (field(value)) }
                    }
                }
            }
            Some(other) => (field(other)),
        }
    }
}

fn field(value: &Value) -> Markup {
    html! {
        @match value {
            Value::String(text) => div.text { (text) },
            Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_string) => {
                ul.texts { @for item in items { li.text { (item.as_str().unwrap_or_default()) } } }
            }
            other => pre.json { (serde_json::to_string_pretty(other).unwrap_or_default()) },
        }
    }
}

/// The last 8 hex digits of an item id: its random part, enough to tell items apart on a
/// page (a UUIDv7 starts with its time, shared by every item queued in the same minute).
fn short(id: &str) -> &str {
    id.get(id.len().saturating_sub(8)..).unwrap_or(id)
}

/// Percent-encodes a query value.
pub(crate) fn urlencode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// "3 min", "2 h", "5 d": how long an item has waited.
pub(crate) fn age(waited_millis: i64) -> String {
    let seconds = waited_millis.max(0) / 1000;
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min", seconds / 60),
        3600..86_400 => format!("{} h", seconds / 3600),
        _ => format!("{} d", seconds / 86_400),
    }
}
