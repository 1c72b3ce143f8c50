//! A lead's adjudication: claim one, its page (both reviewers' answers and notes, never Jev's),
//! the decision (the review's label) and the release.

use std::{collections::BTreeMap, time::SystemTime};

use axum::{Form, extract::Path, http::StatusCode, response::Response};
use jevjudge_store::{Adjudication, AdjudicationClaim, Decision, QueueError, QueueItemId};

use crate::session::Session;

use super::{
    Ui, field,
    item::criteria,
    page,
    pages::{self, AdjudicationView, Answer, AnswerColumn, CriterionView},
    refused, see_other, store_failed,
};

/// The signed-in lead, or the page that refuses the request.
fn lead<'a>(ui: &'a Ui, session: Result<&'a Session, Response>) -> Result<&'a Session, Response> {
    let session = session?;
    if !ui.state.is_lead(&session.name) {
        return Err(refused(
            StatusCode::FORBIDDEN,
            "Only a lead adjudicates: ask your operator to mark you as one.",
        ));
    }
    Ok(session)
}

fn not_found() -> Response {
    refused(StatusCode::NOT_FOUND, "There is no such adjudication.")
}

fn not_yours() -> Response {
    refused(
        StatusCode::CONFLICT,
        "This adjudication is not yours: another lead holds or decided it, or your lease \
         expired. Claim the next one from the queue page.",
    )
}

pub(super) async fn claim(ui: Ui, Form(form): Form<Vec<(String, String)>>) -> Response {
    let session = match lead(&ui, ui.checked(&form)) {
        Ok(session) => session,
        Err(response) => return response,
    };
    match ui
        .store
        .claim_adjudication_at(
            &session.name,
            ui.state.lease(),
            ui.state.max_leases_per_reviewer(),
            false,
            SystemTime::now(),
        )
        .await
    {
        Ok(AdjudicationClaim::Leased { adjudication, .. }) => {
            see_other(&format!("/ui/adjudications/{}", adjudication.item))
        }
        Ok(AdjudicationClaim::Empty) => see_other("/ui/?message=no-adjudication"),
        Ok(AdjudicationClaim::AtCap { held }) => refused(
            StatusCode::CONFLICT,
            &format!(
                "You hold {} items, the most one reviewer may hold at once: decide or release \
                 one of them first.",
                held.len()
            ),
        ),
        Err(error) => store_failed(error),
    }
}

async fn open(ui: &Ui, item: &str) -> Result<(QueueItemId, Adjudication), Response> {
    let item: QueueItemId = item.parse().map_err(|_| not_found())?;
    match ui.store.adjudication_at(item, SystemTime::now()).await {
        Ok(Some(adjudication)) => Ok((item, adjudication)),
        Ok(None) => Err(not_found()),
        Err(error) => Err(store_failed(error)),
    }
}

fn view_page(
    ui: &Ui,
    session: &Session,
    adjudication: &Adjudication,
    form: &[(String, String)],
    status: StatusCode,
    error: Option<String>,
) -> Response {
    let csrf = ui.key.csrf(session);
    let criteria = criteria(&adjudication.questions);
    let column = |name: &str, findings: &BTreeMap<String, Option<bool>>, note: &Option<String>| {
        AnswerColumn {
            name: name.to_owned(),
            findings: criteria
                .iter()
                .map(|(id, _)| findings.get(id).copied().flatten())
                .collect(),
            note: note.clone(),
        }
    };
    let answers = adjudication
        .answers
        .iter()
        .map(|answer| column(&answer.name, &answer.findings, &answer.note))
        .collect();
    let decided = adjudication.decision.as_ref().map(|decision| {
        (
            column(
                &format!("{} (lead)", decision.name),
                &decision.findings,
                &decision.note,
            ),
            adjudication.upheld.clone().unwrap_or_default(),
        )
    });
    let view = AdjudicationView {
        who: ui.who(session, &csrf),
        item: adjudication.item.to_string(),
        version: adjudication.definition_version.clone(),
        disagreement: adjudication.disagreement,
        state: adjudication.state.as_ref(),
        criteria: criteria
            .iter()
            .map(|(id, instructions)| CriterionView {
                id: id.clone(),
                instructions: instructions.clone(),
                answer: field(form, &format!("c.{id}")).and_then(Answer::parse),
            })
            .collect(),
        answers,
        lease_expires: adjudication.lease_expires.clone(),
        note: field(form, "note").unwrap_or("").to_owned(),
        error,
        decided,
    };
    page(status, pages::adjudication(&view))
}

/// What the lead may see: the form while they hold it, the decision once they decided it.
fn theirs(adjudication: &Adjudication, name: &str) -> bool {
    match &adjudication.decision {
        Some(decision) => decision.name == name,
        None => adjudication.claimed_by.as_deref() == Some(name),
    }
}

pub(super) async fn adjudication_page(ui: Ui, Path(item): Path<String>) -> Response {
    let session = match lead(&ui, ui.reviewer()) {
        Ok(session) => session,
        Err(response) => return response,
    };
    let (_, adjudication) = match open(&ui, &item).await {
        Ok(opened) => opened,
        Err(response) => return response,
    };
    if !theirs(&adjudication, &session.name) {
        return not_yours();
    }
    view_page(&ui, session, &adjudication, &[], StatusCode::OK, None)
}

pub(super) async fn decide(
    ui: Ui,
    Path(item): Path<String>,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    let session = match lead(&ui, ui.checked(&form)) {
        Ok(session) => session,
        Err(response) => return response,
    };
    let (item, adjudication) = match open(&ui, &item).await {
        Ok(opened) => opened,
        Err(response) => return response,
    };
    let mut findings = BTreeMap::new();
    let mut missing = Vec::new();
    for (id, _) in criteria(&adjudication.questions) {
        match field(&form, &format!("c.{id}")).and_then(Answer::parse) {
            Some(answer) => {
                findings.insert(id, answer.finding());
            }
            None => missing.push(id),
        }
    }
    let refill = |error: String| {
        view_page(
            &ui,
            session,
            &adjudication,
            &form,
            StatusCode::UNPROCESSABLE_ENTITY,
            Some(error),
        )
    };
    if !missing.is_empty() {
        if !theirs(&adjudication, &session.name) {
            return not_yours();
        }
        return refill(format!(
            "Answer every criterion (missing: {}).",
            missing.join(", ")
        ));
    }
    let note = field(&form, "note").unwrap_or("").trim();
    let decision = Decision {
        findings,
        note: (!note.is_empty()).then(|| note.to_owned()),
    };
    match ui
        .store
        .decide_adjudication_at(item, &session.name, &decision, SystemTime::now())
        .await
    {
        Ok(_) | Err(QueueError::AlreadyDecided) => see_other(&format!("/ui/adjudications/{item}")),
        Err(QueueError::NotFound) => not_found(),
        Err(QueueError::LeaseNotHeld | QueueError::Expired) => not_yours(),
        Err(QueueError::Invalid(reason)) => refill(reason),
        Err(error) => store_failed(error),
    }
}

pub(super) async fn release(
    ui: Ui,
    Path(item): Path<String>,
    Form(form): Form<Vec<(String, String)>>,
) -> Response {
    let session = match lead(&ui, ui.checked(&form)) {
        Ok(session) => session,
        Err(response) => return response,
    };
    let Ok(item) = item.parse::<QueueItemId>() else {
        return not_found();
    };
    match ui
        .store
        .release_adjudication_at(item, &session.name, SystemTime::now())
        .await
    {
        Ok(()) => see_other("/ui/?message=released"),
        Err(QueueError::NotFound) => not_found(),
        Err(QueueError::LeaseNotHeld | QueueError::AlreadyDecided | QueueError::Expired) => {
            not_yours()
        }
        Err(error) => store_failed(error),
    }
}
