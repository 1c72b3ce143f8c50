//! One queue item: its page (the blind form, or the result once decided), the decision and the
//! release.

use axum::{Form, extract::Path, http::StatusCode, response::Response};
use jevjudge_store::{
    Decision, MAX_NOTE_CHARS, QueueError, QueueItemId, QueueItemView, check_note,
};
use serde_json::Value;

use crate::session::Session;

use super::{
    Ui, field, page,
    pages::{self, Answer, CriterionView, ItemView, ResultRow, ResultView},
    refused, see_other, store_failed,
};

fn item_id(text: &str) -> Result<QueueItemId, Response> {
    text.parse()
        .map_err(|_| refused(StatusCode::NOT_FOUND, "There is no such item."))
}

/// What an item's page and its decision start from.
struct Opened<'a> {
    /// The reviewer, signed in (and, for a POST, with the form's CSRF token checked).
    session: &'a Session,
    /// The session's CSRF token, for the forms of the page.
    csrf: String,
    /// The item the path names.
    item: QueueItemId,
    /// What the store holds of it.
    view: QueueItemView,
}

/// The reviewer (`session`, as [`Ui::reviewer`] or [`Ui::checked`] gave it) and the item the
/// path names, read from the store; or the page that refuses the request.
async fn open<'a>(
    ui: &'a Ui,
    session: Result<&'a Session, Response>,
    item: &str,
) -> Result<Opened<'a>, Response> {
    let session = session?;
    let item = item_id(item)?;
    let view = match ui.store.queue_item(item).await {
        Ok(Some(view)) => view,
        Ok(None) => return Err(refused(StatusCode::NOT_FOUND, "There is no such item.")),
        Err(error) => return Err(store_failed(error)),
    };
    Ok(Opened {
        session,
        csrf: ui.key.csrf(session),
        item,
        view,
    })
}

/// The criteria of an item: (id, instructions) from the definition's questions JSON.
pub(super) fn criteria(questions: &Value) -> Vec<(String, String)> {
    match questions {
        Value::Object(map) => map
            .iter()
            .map(|(id, question)| {
                let instructions = question
                    .get("instructions")
                    .and_then(Value::as_str)
                    .map_or_else(|| question.to_string(), str::to_owned);
                (id.clone(), instructions)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// What a reviewer may see of an item.
enum Access {
    /// Theirs to decide: the form.
    Decide,
    /// Decided by them: the result.
    Result,
    /// Not theirs.
    None,
}

/// The store reads `claimed_by` as of now: it is set only while the lease is live.
fn access(view: &QueueItemView, name: &str) -> Access {
    match &view.decision {
        Some(decision) if decision.reviewer == name => Access::Result,
        Some(_) => Access::None,
        None if view.entry.claimed_by.as_deref() == Some(name) => Access::Decide,
        None => Access::None,
    }
}

pub(super) async fn item_page(ui: Ui, Path(item): Path<String>) -> Response {
    let Opened {
        session,
        csrf,
        view,
        ..
    } = match open(&ui, ui.reviewer(), &item).await {
        Ok(opened) => opened,
        Err(response) => return response,
    };
    match access(&view, &session.name) {
        Access::Decide => item_form(&ui, session, &csrf, &view, &[], StatusCode::OK, None),
        Access::Result => result_page(&ui, session, &csrf, &view),
        Access::None => not_yours(),
    }
}

fn not_yours() -> Response {
    refused(
        StatusCode::CONFLICT,
        "This item is not yours: another reviewer holds or decided it, or your lease expired \
         and it went back to the queue. Claim the next item from the queue.",
    )
}

fn expired() -> Response {
    refused(
        StatusCode::CONFLICT,
        "This item has expired: its state text was erased by the retention before anyone \
         decided it. Claim the next item from the queue.",
    )
}

fn item_form(
    ui: &Ui,
    session: &Session,
    csrf: &str,
    view: &QueueItemView,
    form: &[(String, String)],
    status: StatusCode,
    error: Option<String>,
) -> Response {
    let criteria = criteria(&view.subject.questions)
        .into_iter()
        .map(|(id, instructions)| CriterionView {
            answer: field(form, &format!("c.{id}")).and_then(Answer::parse),
            id,
            instructions,
        })
        .collect();
    // RFC 3339 UTC from the store: the page's script shows it in the reviewer's local time.
    let lease = view.entry.lease_expires.clone().unwrap_or_default();
    let page_view = ItemView {
        who: ui.who(session, csrf),
        item: view.entry.item.to_string(),
        version: view.subject.review.definition_version.clone(),
        state: view.subject.state.as_ref(),
        criteria,
        note: field(form, "note").unwrap_or("").to_owned(),
        lease_expires: lease,
        error,
    };
    page(status, pages::item(&page_view))
}

fn result_page(ui: &Ui, session: &Session, csrf: &str, view: &QueueItemView) -> Response {
    let Some(decision) = &view.decision else {
        return not_yours();
    };
    let rows = criteria(&view.subject.questions)
        .into_iter()
        .map(|(id, instructions)| {
            let jev = view.subject.review.findings.get(&id);
            ResultRow {
                reviewer: decision.findings.get(&id).copied().flatten(),
                jev_status: jev
                    .and_then(|f| f.get("status"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                jev_probability: jev
                    .and_then(|f| f.get("yes_probability"))
                    .and_then(Value::as_f64),
                id,
                instructions,
            }
        })
        .collect();
    let result = ResultView {
        who: ui.who(session, csrf),
        item: view.entry.item.to_string(),
        version: view.subject.review.definition_version.clone(),
        review_status: view.subject.review.status.clone(),
        rows,
        note: decision.note.clone(),
    };
    page(StatusCode::OK, pages::result(&result))
}

pub(super) async fn decide(
    ui: Ui,
    Path(item): Path<String>,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    let Opened {
        session,
        csrf,
        item,
        view,
    } = match open(&ui, ui.checked(&form), &item).await {
        Ok(opened) => opened,
        Err(response) => return response,
    };
    let mut findings = std::collections::BTreeMap::new();
    let mut missing = Vec::new();
    for (id, _) in criteria(&view.subject.questions) {
        match field(&form, &format!("c.{id}")).and_then(Answer::parse) {
            Some(answer) => {
                findings.insert(id, answer.finding());
            }
            None => missing.push(id),
        }
    }
    let note = field(&form, "note").unwrap_or("").trim();
    let error = if !missing.is_empty() {
        Some(format!(
            "Answer every criterion (missing: {}).",
            missing.join(", ")
        ))
    } else if check_note(note).is_err() {
        Some(if note.chars().count() > MAX_NOTE_CHARS {
            format!("The note is longer than {MAX_NOTE_CHARS} characters.")
        } else {
            "The note holds control characters: only line breaks and tabs may be in it.".to_owned()
        })
    } else {
        None
    };
    // The form again, as the reviewer filled it in, saying what is wrong.
    let refill = |error: String| {
        item_form(
            &ui,
            session,
            &csrf,
            &view,
            &form,
            StatusCode::UNPROCESSABLE_ENTITY,
            Some(error),
        )
    };
    if let Some(error) = error {
        if matches!(access(&view, &session.name), Access::Decide) {
            return refill(error);
        }
        return not_yours();
    }
    let decision = Decision {
        findings,
        note: (!note.is_empty()).then(|| note.to_owned()),
    };
    match ui.store.decide(item, &session.name, &decision).await {
        Ok(_) => see_other(&format!("/ui/items/{item}")),
        Err(QueueError::AlreadyDecided) => see_other(&format!("/ui/items/{item}")),
        Err(QueueError::NotFound) => refused(StatusCode::NOT_FOUND, "There is no such item."),
        Err(QueueError::LeaseNotHeld) => not_yours(),
        Err(QueueError::Expired) => expired(),
        Err(QueueError::Invalid(reason)) => refill(reason),
        Err(QueueError::Store(error)) => store_failed(error),
        Err(error) => store_failed(error),
    }
}

pub(super) async fn release(
    ui: Ui,
    Path(item): Path<String>,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    let session = match ui.checked(&form) {
        Ok(session) => session,
        Err(response) => return response,
    };
    let item = match item_id(&item) {
        Ok(item) => item,
        Err(response) => return response,
    };
    match ui.store.release(item, &session.name).await {
        Ok(()) => see_other("/ui/?message=released"),
        Err(QueueError::NotFound) => refused(StatusCode::NOT_FOUND, "There is no such item."),
        Err(QueueError::LeaseNotHeld | QueueError::AlreadyDecided) => not_yours(),
        Err(QueueError::Expired) => expired(),
        Err(QueueError::Invalid(reason)) => refused(StatusCode::UNPROCESSABLE_ENTITY, &reason),
        Err(error) => store_failed(error),
    }
}
