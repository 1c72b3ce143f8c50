//! `GET /openapi.json`: the API described in OpenAPI 3.1, written by hand.

use serde_json::{Value, json};

use crate::{Config, error::ServeError};

/// The OpenAPI 3.1 document of the service with these settings (limits and budgets are
/// filled in from `config`).
pub fn openapi(config: &Config) -> Value {
    let error = |description: &str| {
        json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        })
    };
    let unauthorized = error("No valid bearer token (only when the service requires tokens).");
    let overloaded = {
        let mut response = error(
            "The queue is full (`overloaded`), or no backend slot freed within the review's \
             budget (`queue_timeout`). Retry after `Retry-After` seconds.",
        );
        response["headers"] = json!({"Retry-After": {
            "description": "Seconds to wait before retrying.",
            "schema": {"type": "integer", "minimum": 1}
        }});
        response
    };
    let request_id_header = json!({
        "description": "The request id: the caller's `x-request-id` when it is 1–128 characters \
                        of A–Z a–z 0–9 - _ . :, else a generated one.",
        "schema": {"type": "string"}
    });
    let secured = if config.auth_tokens.is_enabled() {
        json!([{"bearer": []}])
    } else {
        json!([])
    };

    let mut document = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "jevjudge review service",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "POST a state, get a verdict: each review sends one System One request \
                            and returns the Result JSON (cli-and-formats.md §4.1). An ERROR verdict \
                            is a 200: the review ran. Every response carries `x-request-id`."
        },
        "paths": {
            "/v1/reviews/{version}": {
                "post": {
                    "operationId": "review",
                    "summary": "Review a state against the definition with this version.",
                    "security": secured,
                    "parameters": [{
                        "name": "version", "in": "path", "required": true,
                        "description": "A definition version listed by GET /v1/definitions.",
                        "schema": {"type": "string"}
                    }, {
                        "name": "x-request-id", "in": "header", "required": false,
                        "description": "The caller's request id, kept when it is 1–128 characters \
                                        of A–Z a–z 0–9 - _ . : and otherwise replaced by a \
                                        generated one: never a reason to reject a request.",
                        "schema": {"type": "string"}
                    }],
                    "requestBody": {
                        "required": true,
                        "description": format!(
                            "At most {} bytes.", config.max_body_bytes
                        ),
                        "content": {"application/json": {
                            "schema": {"$ref": "#/components/schemas/ReviewRequest"}
                        }}
                    },
                    "responses": {
                        "200": {
                            "description": "The review ran: its Result (PASS, FAIL, INCONCLUSIVE \
                                            or ERROR), with `backend`.",
                            "headers": {
                                "x-request-id": request_id_header,
                                "Server-Timing": {
                                    "description": "`queue;dur=MS, review;dur=MS`: the wait for \
                                                    a backend slot and the review time.",
                                    "schema": {"type": "string"}
                                }
                            },
                            "content": {"application/json": {
                                "schema": {"$ref": "#/components/schemas/Result"}
                            }}
                        },
                        "400": error("The body is not JSON (`malformed_json`) or could not be read \
                                      (`body_unreadable`)."),
                        "401": unauthorized,
                        "404": error("No definition has this version (`unknown_version`)."),
                        "408": error("The body did not arrive within the longest review budget \
                                      (`body_timeout`)."),
                        "413": error("The body is over the size limit (`body_too_large`)."),
                        "422": error("The body is JSON but not a review request (`invalid_body`): \
                                      the message names the field."),
                        "503": overloaded
                    }
                }
            },
            "/v1/definitions": {
                "get": {
                    "operationId": "listDefinitions",
                    "summary": "The loaded definitions: versions, criteria ids, expected flags and \
                                thresholds (no question text).",
                    "security": secured,
                    "responses": {
                        "200": {
                            "description": "The definitions in version order.",
                            "content": {"application/json": {
                                "schema": {"$ref": "#/components/schemas/DefinitionList"}
                            }}
                        },
                        "401": unauthorized
                    }
                }
            },
            "/healthz": {
                "get": {
                    "operationId": "health",
                    "summary": "Liveness: 200 while the service runs. No token needed.",
                    "security": [],
                    "responses": {"200": {
                        "description": "Running.",
                        "content": {"application/json": {"schema": {
                            "type": "object",
                            "required": ["status", "definitions"],
                            "properties": {
                                "status": {"const": "ok"},
                                "definitions": {"type": "integer", "minimum": 0}
                            }
                        }}}
                    }}
                }
            },
            "/metrics": {
                "get": {
                    "operationId": "metrics",
                    "summary": "Prometheus text exposition: reviews by definition, status and \
                                error; review time; backend attempts, retries and HTTP statuses; \
                                in-flight and waiting reviews; queue rejections; HTTP requests.",
                    "security": secured,
                    "responses": {
                        "200": {
                            "description": "The metrics.",
                            "content": {"application/openmetrics-text; version=1.0.0": {"schema": {"type": "string"}}}
                        },
                        "401": unauthorized
                    }
                }
            },
            "/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "summary": "This document. No token needed.",
                    "security": [],
                    "responses": {"200": {
                        "description": "OpenAPI 3.1.",
                        "content": {"application/json": {"schema": {"type": "object"}}}
                    }}
                }
            }
        },
        "components": {
            "securitySchemes": {"bearer": {
                "type": "http", "scheme": "bearer",
                "description": "One of the tokens in the variable named by --auth-token-env."
            }},
            "schemas": {
                "ReviewRequest": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["state"],
                    "properties": {
                        "state": {
                            "description": "The state to review, sent unchanged.",
                            "type": ["string", "object", "array"]
                        },
                        "budget_millis": {
                            "description": format!(
                                "The review's whole budget in milliseconds (default {}, capped \
                                 at {}). A review also waits at most this long for a backend slot.",
                                config.default_budget.as_millis(),
                                config.max_budget.as_millis()
                            ),
                            "type": ["integer", "null"],
                            "minimum": 1,
                            "maximum": u64::MAX
                        }
                    }
                },
                "Result": {
                    "type": "object",
                    "required": ["definition_version", "status", "error", "detail", "findings",
                                 "model", "usage", "elapsed_millis", "backend"],
                    "properties": {
                        "definition_version": {"type": "string"},
                        "status": {"$ref": "#/components/schemas/Status"},
                        "error": {"enum": ["NONE", "TIMEOUT", "INVALID_RESPONSE", "BACKEND",
                                           "EVALUATOR"]},
                        "detail": {
                            "description": "A safe code when status is ERROR (for example \
                                            `budget_elapsed`, `http_status_503`), else null.",
                            "type": ["string", "null"]
                        },
                        "findings": {
                            "description": "Criterion id → finding, in definition order; empty \
                                            for ERROR.",
                            "type": "object",
                            "additionalProperties": {"$ref": "#/components/schemas/Finding"}
                        },
                        "model": {"type": ["string", "null"]},
                        "usage": {"oneOf": [{"type": "null"}, {
                            "type": "object",
                            "required": ["input_tokens", "output_tokens"],
                            "properties": {
                                "input_tokens": {"type": "integer", "minimum": 0},
                                "output_tokens": {"type": "integer", "minimum": 0}
                            }
                        }]},
                        "elapsed_millis": {"type": "number", "minimum": 0},
                        "backend": {
                            "description": "Where the answers came from (as `jevjudge judge` \
                                            prints it): `fake` and `fixture` are not a model.",
                            "enum": ["systemone", "replay", "fixture", "fake", "injected"]
                        }
                    }
                },
                "Status": {"enum": ["PASS", "FAIL", "INCONCLUSIVE", "ERROR"]},
                "Finding": {
                    "type": "object",
                    "required": ["status", "yes_probability", "expected_probability"],
                    "properties": {
                        "status": {"enum": ["PASS", "FAIL", "INCONCLUSIVE"]},
                        "yes_probability": {"type": "number", "minimum": 0, "maximum": 1},
                        "expected_probability": {"type": "number", "minimum": 0, "maximum": 1}
                    }
                },
                "DefinitionList": {
                    "type": "object",
                    "required": ["definitions"],
                    "properties": {"definitions": {"type": "array", "items": {
                        "type": "object",
                        "required": ["version", "criteria"],
                        "properties": {
                            "version": {"type": "string"},
                            "criteria": {"type": "array", "items": {
                                "type": "object",
                                "required": ["id", "expected", "fail_at_or_below",
                                             "pass_at_or_above"],
                                "properties": {
                                    "id": {"type": "string"},
                                    "expected": {"type": "boolean"},
                                    "fail_at_or_below": {"type": "number"},
                                    "pass_at_or_above": {"type": "number"}
                                }
                            }}
                        }
                    }}}
                },
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {"error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {
                            "code": {"enum": ServeError::CODES},
                            "message": {"type": "string"}
                        }
                    }}
                }
            }
        }
    });
    crate::reviews_api::describe(&mut document, &secured, &unauthorized);
    crate::queue_openapi::describe(&mut document);
    crate::routes_api::describe(&mut document, &secured, &unauthorized);
    crate::route_changes_openapi::describe(&mut document, &secured, &unauthorized);
    document
}
