//! The review queue's part of `/openapi.json`: its routes, bodies, answers and schemas.

use jevjudge_store::{MAX_NOTE_CHARS, MAX_PAGE};
use serde_json::{Value, json};

/// Adds the queue's paths and schemas to the OpenAPI document.
pub(crate) fn describe(document: &mut Value) {
    let error = |description: &str| {
        json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        })
    };
    let reviewer = json!([{"reviewer": []}]);
    let item_parameter = json!({
        "name": "item", "in": "path", "required": true,
        "description": "A queue item id (from a claim).",
        "schema": {"type": "string"}
    });
    let unauthorized = error("No valid reviewer token (`unauthorized`).");
    let no_queue = |also: &str| {
        error(&format!(
            "The service has no review queue (`no_queue`){also}."
        ))
    };
    let unavailable = error("The store is unavailable (`store_unavailable`); retry later.");
    let paths = &mut document["paths"];
    paths["/v1/queue/claim"] = json!({"post": {
        "operationId": "claimQueueItem",
        "summary": "Lease the oldest pending item (optionally of one definition version). \
                    Blind: the state and the criteria, never Jev's findings.",
        "security": reviewer,
        "requestBody": {"required": false, "content": {"application/json": {"schema": {
            "type": "object", "additionalProperties": false,
            "properties": {
                "version": {"type": ["string", "null"], "minLength": 1, "maxLength": 256},
                "new": {"type": ["boolean", "null"],
                        "description": "true: a new item even while holding some (within \
                                        --max-leases-per-reviewer); else an item the caller \
                                        holds comes back first."},
                "kind": {"enum": ["review", "adjudication", null],
                         "description": "adjudication: a disagreement to decide (leads only)."}
            }
        }}}},
        "responses": {
            "200": {"description": "The leased item (an adjudication for `kind: adjudication`).",
                    "content": {"application/json": {"schema": {"oneOf": [
                        {"$ref": "#/components/schemas/ClaimedItem"},
                        {"$ref": "#/components/schemas/ClaimedAdjudication"}
                    ]}}}},
            "204": {"description": "Nothing is pending."},
            "400": error("The body is not JSON (`malformed_json`)."),
            "401": unauthorized.clone(),
            "403": error("An adjudication asked for by a reviewer who is not a lead \
                          (`not_a_lead`)."),
            "404": no_queue(""),
            "409": {
                "description": "The reviewer holds as many items as one reviewer may \
                                (--max-leases-per-reviewer, `too_many_leases`): decide or \
                                release one of `held` first.",
                "content": {"application/json": {"schema": {
                    "$ref": "#/components/schemas/TooManyLeases"}}}
            },
            "413": error("The body is over 64 KiB (`body_too_large`)."),
            "422": error("The body is not `{\"version\": …}`, or the version holds a control \
                          character (`invalid_body`)."),
            "503": unavailable.clone()
        }
    }});
    paths["/v1/queue/{item}/decision"] = json!({"post": {
        "operationId": "decideQueueItem",
        "summary": "Save the lease holder's decision: whether each criterion's condition really \
                    holds (null: can't tell). The answer reveals Jev's findings.",
        "security": reviewer,
        "parameters": [item_parameter.clone()],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "$ref": "#/components/schemas/QueueDecision"}}}},
        "responses": {
            "200": {"description": "Saved (an adjudication's answer for a lead's adjudication).",
                    "content": {"application/json": {"schema": {"oneOf": [
                        {"$ref": "#/components/schemas/QueueDecided"},
                        {"$ref": "#/components/schemas/AdjudicationDecided"}
                    ]}}}},
            "400": error("The body is not JSON (`malformed_json`)."),
            "401": unauthorized.clone(),
            "404": no_queue(", or no item has this id (`queue_item_not_found`)"),
            "409": error("The lease is not the caller's or has expired (`lease_not_held`), the \
                          item was decided already (`already_decided`), or it expired: \
                          retention erased its state text (`item_expired`)."),
            "413": error("The body is over 64 KiB (`body_too_large`)."),
            "422": error("The body is not a decision (`invalid_body`), or its findings do not \
                          answer exactly the definition's criteria (`invalid_decision`)."),
            "503": unavailable.clone()
        }
    }});
    paths["/v1/queue/{item}/release"] = json!({"post": {
        "operationId": "releaseQueueItem",
        "summary": "Give a held item back to the queue.",
        "security": reviewer,
        "parameters": [item_parameter],
        "responses": {
            "200": {"description": "Released.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["item", "released"],
                "properties": {"item": {"type": "string"}, "released": {"const": true}}
            }}}},
            "401": unauthorized.clone(),
            "404": no_queue(", or no item has this id (`queue_item_not_found`)"),
            "409": error("The lease is not the caller's or has expired (`lease_not_held`), the \
                          item was decided already (`already_decided`), or it expired: \
                          retention erased its state text (`item_expired`)."),
            "503": unavailable.clone()
        }
    }});
    let page_parameter = |name: &str, description: &str, schema: Value| {
        json!({"name": name, "in": "query", "required": false, "description": description,
               "schema": schema})
    };
    paths["/v1/queue/mine"] = json!({"get": {
        "operationId": "queueMine",
        "summary": "The items the caller holds under a live lease, soonest lease end first.",
        "security": reviewer,
        "responses": {
            "200": {"description": "The held items.", "content": {"application/json": {
                "schema": {
                    "type": "object", "required": ["items"],
                    "properties": {"items": {"type": "array", "items": {
                        "type": "object",
                        "required": ["item", "kind", "definition_version", "lease_expires"],
                        "properties": {
                            "item": {"type": "string"},
                            "kind": {"enum": ["review", "adjudication"]},
                            "definition_version": {"type": "string"},
                            "lease_expires": {"type": "string", "description": "RFC 3339."}
                        }
                    }}}
                }}}},
            "401": unauthorized.clone(),
            "404": no_queue(""),
            "503": unavailable.clone()
        }
    }});
    paths["/v1/queue/decisions"] = json!({"get": {
        "operationId": "queueDecisions",
        "summary": "The queued reviews with their decisions (each reviewer's answer and note, \
                    the adjudication, the final label and who gave it), oldest first decision \
                    first, keyset-paged. Leads only.",
        "security": reviewer,
        "parameters": [
            page_parameter("version", "Only this definition version.",
                           json!({"type": "string", "minLength": 1, "maxLength": 256})),
            page_parameter("since", "Only reviews first decided at or after this RFC 3339 \
                                     time or date.", json!({"type": "string"})),
            page_parameter("reviewer", "Only reviews this reviewer decided or adjudicated.",
                           json!({"type": "string", "pattern": "^[A-Za-z0-9._@-]{1,64}$"})),
            page_parameter("disagreement", "true: only reviews whose two reviewers \
                                            disagreed; false: only the others.",
                           json!({"enum": ["true", "false"]})),
            page_parameter("limit", "Page size (default 50).",
                           json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE})),
            page_parameter("cursor", "`next_cursor` of the previous page.",
                           json!({"type": "string"}))
        ],
        "responses": {
            "200": {"description": "A page of decisions.", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/QueueDecisionPage"}}}},
            "400": error("A parameter is unknown, repeated or not valid (`invalid_query`)."),
            "401": unauthorized.clone(),
            "403": error("The caller is not a lead (`not_a_lead`)."),
            "404": no_queue(""),
            "503": unavailable.clone()
        }
    }});
    paths["/v1/queue/stats"] = json!({"get": {
        "operationId": "queueStats",
        "summary": "Pending items by version, claimed, decided, and agreement (Scott's π per \
                    criterion) where two reviewers decided the same review.",
        "security": reviewer,
        "responses": {
            "200": {"description": "The queue in numbers.", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/QueueStats"}}}},
            "401": unauthorized,
            "404": no_queue(""),
            "503": unavailable
        }
    }});
    document["components"]["securitySchemes"]["reviewer"] = json!({
        "type": "http", "scheme": "bearer",
        "description": "A reviewer's token from the variable named by --reviewer-tokens-env."
    });
    let schemas = &mut document["components"]["schemas"];
    schemas["ClaimedItem"] = json!({
        "type": "object",
        "description": "Blind: no review id, no reason for queueing, no reference, nothing \
                        of Jev's.",
        "required": ["item", "definition_version", "slot", "state", "criteria",
                     "lease_expires", "resumed"],
        "additionalProperties": false,
        "properties": {
            "item": {"type": "string"},
            "definition_version": {"type": "string"},
            "slot": {"type": "integer", "minimum": 1, "maximum": 2},
            "state": {"description": "The state text as reviewed (null if erased)."},
            "criteria": {"type": "array", "items": {
                "type": "object",
                "required": ["id", "instructions", "expected"],
                "properties": {
                    "id": {"type": "string"},
                    "instructions": {"type": ["string", "null"]},
                    "expected": {"type": ["boolean", "null"]}
                }
            }},
            "lease_expires": {"type": "string", "description": "RFC 3339."},
            "resumed": {"type": "boolean",
                        "description": "true: an item the caller held already (its lease \
                                        unchanged)."}
        }
    });
    let answer = json!({
        "type": "object",
        "required": ["name", "findings", "note", "decided_at"],
        "properties": {
            "name": {"type": "string"},
            "findings": {"type": "object", "additionalProperties": {"type": ["boolean", "null"]}},
            "note": {"type": ["string", "null"]},
            "decided_at": {"type": "string"}
        }
    });
    let criteria = json!({"type": "array", "items": {
        "type": "object",
        "required": ["id", "instructions", "expected"],
        "properties": {
            "id": {"type": "string"},
            "instructions": {"type": ["string", "null"]},
            "expected": {"type": ["boolean", "null"]}
        }
    }});
    schemas["ClaimedAdjudication"] = json!({
        "type": "object",
        "description": "Both reviewers' answers and notes, never Jev's.",
        "required": ["item", "kind", "definition_version", "disagreement", "state", "criteria",
                     "answers", "lease_expires", "resumed"],
        "properties": {
            "item": {"type": "string"},
            "kind": {"const": "adjudication"},
            "definition_version": {"type": "string"},
            "disagreement": {"type": "boolean",
                             "description": "false: the reviewers agreed but could not tell."},
            "state": {},
            "criteria": criteria,
            "answers": {"type": "array", "items": answer},
            "lease_expires": {"type": ["string", "null"]},
            "resumed": {"type": "boolean"}
        }
    });
    schemas["AdjudicationDecided"] = json!({
        "type": "object",
        "required": ["item", "kind", "definition_version", "reviewer", "findings", "answers",
                     "upheld"],
        "properties": {
            "item": {"type": "string"},
            "kind": {"const": "adjudication"},
            "definition_version": {"type": "string"},
            "reviewer": {"type": "string"},
            "findings": {"type": "object", "additionalProperties": {"type": ["boolean", "null"]}},
            "answers": {"type": "array", "items": answer},
            "upheld": {"enum": ["first", "second", "both", "neither", null]}
        }
    });
    schemas["QueueDecisionPage"] = json!({
        "type": "object",
        "required": ["decisions", "next_cursor"],
        "properties": {
            "decisions": {"type": "array", "items": {
                "type": "object",
                "required": ["item", "review_id", "definition_version", "decided_at",
                             "reviewers", "disagreement", "adjudication", "label", "label_by"],
                "properties": {
                    "item": {"type": "string"},
                    "review_id": {"type": "string"},
                    "definition_version": {"type": "string"},
                    "decided_at": {"type": "string"},
                    "reviewers": {"type": "array", "items": answer},
                    "disagreement": {"type": "boolean"},
                    "adjudication": {"oneOf": [{"type": "null"}, {
                        "type": "object",
                        "required": ["state", "decision", "upheld"],
                        "properties": {
                            "state": {"enum": ["pending", "decided"]},
                            "decision": {"oneOf": [{"type": "null"}, answer]},
                            "upheld": {"enum": ["first", "second", "both", "neither", null]}
                        }
                    }]},
                    "label": {"type": ["object", "null"],
                              "additionalProperties": {"type": ["boolean", "null"]}},
                    "label_by": {"type": "array", "items": {"type": "string"}}
                }
            }},
            "next_cursor": {"type": ["string", "null"]}
        }
    });
    schemas["TooManyLeases"] = json!({
        "type": "object",
        "required": ["error", "held"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"const": "too_many_leases"},
                               "message": {"type": "string"}}
            },
            "held": {"type": "array", "items": {"type": "string"},
                     "description": "The items the reviewer holds (queue item ids)."}
        }
    });
    schemas["QueueDecision"] = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["findings"],
        "properties": {
            "findings": {
                "type": "object",
                "description": "Every criterion id of the definition: true (holds), false (does \
                                not hold) or null (can't tell).",
                "additionalProperties": {"type": ["boolean", "null"]}
            },
            "note": {"type": ["string", "null"], "maxLength": MAX_NOTE_CHARS}
        }
    });
    schemas["QueueDecided"] = json!({
        "type": "object",
        "required": ["item", "review_id", "definition_version", "reviewer", "findings",
                     "status_by_jev", "findings_by_jev"],
        "properties": {
            "item": {"type": "string"},
            "review_id": {"type": "string"},
            "definition_version": {"type": "string"},
            "reviewer": {"type": "string"},
            "findings": {"type": "object",
                         "additionalProperties": {"type": ["boolean", "null"]}},
            "status_by_jev": {"$ref": "#/components/schemas/Status"},
            "findings_by_jev": {"type": "object"}
        }
    });
    schemas["QueueStats"] = json!({
        "type": "object",
        "required": ["pending_by_version", "claimed", "decided", "expired", "agreement",
                     "adjudication"],
        "properties": {
            "pending_by_version": {"type": "object",
                                   "additionalProperties": {"type": "integer", "minimum": 0}},
            "claimed": {"type": "integer", "minimum": 0},
            "decided": {"type": "integer", "minimum": 0},
            "expired": {"type": "integer", "minimum": 0,
                        "description": "Items closed undecided: retention erased their \
                                        review's state text."},
            "agreement": {"type": "object", "additionalProperties": {
                "type": "object",
                "required": ["items", "observed", "kappa", "scott_pi"],
                "properties": {
                    "items": {"type": "integer", "minimum": 0},
                    "observed": {"type": ["number", "null"]},
                    "kappa": {"type": ["number", "null"],
                              "description": "Cohen's kappa, first slot against second."},
                    "scott_pi": {"type": ["number", "null"],
                                 "description": "Scott's π: the slots are exchangeable."}
                }
            }},
            "adjudication": {
                "type": "object",
                "required": ["pending", "decided", "upheld", "by_reviewer"],
                "properties": {
                    "pending": {"type": "integer", "minimum": 0},
                    "decided": {"type": "integer", "minimum": 0},
                    "upheld": {
                        "type": "object",
                        "required": ["first", "second", "both", "neither"],
                        "description": "Whose findings the lead's equalled.",
                        "properties": {
                            "first": {"type": "integer", "minimum": 0},
                            "second": {"type": "integer", "minimum": 0},
                            "both": {"type": "integer", "minimum": 0},
                            "neither": {"type": "integer", "minimum": 0}
                        }
                    },
                    "by_reviewer": {"type": "object", "additionalProperties": {
                        "type": "object",
                        "required": ["upheld", "overruled"],
                        "properties": {
                            "upheld": {"type": "integer", "minimum": 0},
                            "overruled": {"type": "integer", "minimum": 0}
                        }
                    }}
                }
            }
        }
    });
}
