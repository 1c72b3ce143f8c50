//! The OpenAPI description of the routes' changes ([`crate::route_changes_api`]): `PUT` of a
//! route, promote, rollback and the history, with their bodies and schemas.

use serde_json::{Value, json};

/// Adds the change paths and their schemas to the document (`/v1/routes/{route}`'s `GET` is
/// already there).
pub(crate) fn describe(document: &mut Value, secured: &Value, unauthorized: &Value) {
    let error = |description: &str| {
        json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        })
    };
    // Changes always need a token: an administrator's.
    let admin = json!([{"bearer": []}]);
    let unauthorized_admin = error(
        "No administrator's token (`unauthorized`): changes to routes need one of the \
         administrators' tokens, whether or not callers need tokens.",
    );
    let forbidden =
        error("A caller's or a reviewer's token (`forbidden`): only administrators change routes.");
    let no_store = "the service keeps no store (`no_store`)";
    let unavailable = error(
        "The store cannot be written (`store_unavailable`). Retry after `Retry-After` seconds.",
    );
    let invalid = |what: &str| {
        error(&format!(
            "The body is JSON of the wrong shape (`invalid_body`): {what}."
        ))
    };
    let malformed = error("The body is not JSON (`malformed_json`).");
    let parameter = json!([{
        "name": "route", "in": "path", "required": true,
        "description": "The route's name.", "schema": {"type": "string"}
    }]);
    let body = |schema: &str| {
        json!({"required": false, "content": {"application/json": {"schema": {
            "$ref": format!("#/components/schemas/{schema}")
        }}}})
    };
    let route_reply = |description: &str| {
        json!({"description": description, "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/Route"}}}})
    };
    let schemas = &mut document["components"]["schemas"];
    schemas["RoutePut"] = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "live": {"description": "The live version: required to create the route; on an \
                                     existing route absent or its live version (changing it \
                                     goes through promote).", "type": "string"},
            "shadows": {"description": "The shadow versions (each once, not the live one, \
                                        loaded here); default none.",
                        "type": "array", "items": {"type": "string"}},
            "shadow_sample": {"description": "The share of live reviews shadowed; default 1.",
                              "type": "number", "minimum": 0, "maximum": 1}
        }
    });
    schemas["RoutePromote"] = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["version"],
        "properties": {
            "version": {"description": "The version to make live.", "type": "string"},
            "reason": {"description": "Why, kept in the history (at most 1000 characters).",
                       "type": ["string", "null"], "maxLength": 1000},
            "force": {"description": "Promote although the gate refuses; recorded as forced.",
                      "type": "boolean"}
        }
    });
    schemas["RouteRollback"] = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "reason": {"description": "Why, kept in the history (at most 1000 characters).",
                       "type": ["string", "null"], "maxLength": 1000}
        }
    });
    schemas["PromoteFigures"] = json!({
        "type": "object",
        "required": ["shadowed_reviews", "labelled_reviews", "false_pass", "live_false_pass"],
        "properties": {
            "shadowed_reviews": {"description": "The version's shadow reviews of the route.",
                                 "type": "integer", "minimum": 0},
            "labelled_reviews": {"description": "Those whose live review people labelled in \
                                                 the queue.", "type": "integer", "minimum": 0},
            "false_pass": {"description": "The version's PASS on labelled reviews that should \
                                           not have passed.", "type": "integer", "minimum": 0},
            "live_false_pass": {"description": "The live reviews' PASS on the same labelled \
                                                reviews that should not have passed.",
                                "type": "integer", "minimum": 0}
        }
    });
    schemas["RoutePromoted"] = json!({
        "type": "object",
        "required": ["route", "figures", "forced", "refusal"],
        "properties": {
            "route": {"$ref": "#/components/schemas/Route"},
            "figures": {"$ref": "#/components/schemas/PromoteFigures"},
            "forced": {"description": "Whether `force` overrode a refusal.", "type": "boolean"},
            "refusal": {"description": "The refusal overridden.", "type": ["string", "null"]}
        }
    });
    schemas["RouteChange"] = json!({
        "type": "object",
        "required": ["route", "seq", "changed_at", "action", "actor", "from_live", "to_live",
                     "shadows", "reason", "forced"],
        "properties": {
            "route": {"type": "string"},
            "seq": {"type": "integer", "minimum": 1},
            "changed_at": {"type": "string", "format": "date-time"},
            "action": {"enum": ["create", "shadows", "promote", "rollback"]},
            "actor": {"description": "`admin` (the API), `routes-file`, or `cli` with the \
                                      operator's name.", "type": "string"},
            "from_live": {"type": ["string", "null"]},
            "to_live": {"type": "string"},
            "shadows": {"type": "array", "items": {"type": "string"}},
            "reason": {"type": ["string", "null"]},
            "forced": {"type": "boolean"}
        }
    });
    let paths = &mut document["paths"];
    paths["/v1/routes/{route}"]["put"] = json!({
        "operationId": "putRoute",
        "summary": "Create a route, or change its shadows and their share (an administrator's \
                    token).",
        "security": admin,
        "parameters": parameter,
        "requestBody": body("RoutePut"),
        "responses": {
            "200": route_reply("The route's shadows as given (changed, or already so)."),
            "201": route_reply("The route, created."),
            "400": malformed,
            "401": unauthorized_admin,
            "403": forbidden,
            "404": error(&format!("{no_store}.")),
            "409": error("`live` is not the route's live version (`route_conflict`: use \
                          promote), the name is a definition version, or the route changed \
                          meanwhile."),
            "413": error("The body is over 64 KiB (`body_too_large`)."),
            "422": invalid("an unknown field, `live` missing on creation, a version not \
                            loaded, a shadow twice or live, a share outside 0 to 1"),
            "503": unavailable
        }
    });
    paths["/v1/routes/{route}/promote"] = json!({"post": {
        "operationId": "promoteRoute",
        "summary": "Make a version live (the old live version becomes the first shadow), \
                    behind the promote gate (an administrator's token).",
        "security": admin,
        "parameters": parameter,
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
            "$ref": "#/components/schemas/RoutePromote"}}}},
        "responses": {
            "200": {"description": "Promoted.", "content": {"application/json": {"schema": {
                "$ref": "#/components/schemas/RoutePromoted"}}}},
            "400": malformed,
            "401": unauthorized_admin,
            "403": forbidden,
            "404": error(&format!("No route has this name (`not_found`), or {no_store}.")),
            "409": {"description": "The gate refused (`promote_refused`, the message names the \
                                    figure: the version is not loaded, has fewer shadowed \
                                    reviews than the minimum, or more labelled false PASS \
                                    than the live version; `figures` holds them all), the \
                                    version is live already, or the route changed meanwhile \
                                    (`route_conflict`).",
                    "content": {"application/json": {"schema": {
                        "allOf": [{"$ref": "#/components/schemas/Error"}],
                        "properties": {"figures": {"$ref": "#/components/schemas/PromoteFigures"}}
                    }}}},
            "413": error("The body is over 64 KiB (`body_too_large`)."),
            "422": invalid("`version` missing, an unknown field, a reason too long"),
            "503": unavailable
        }
    }});
    paths["/v1/routes/{route}/rollback"] = json!({"post": {
        "operationId": "rollbackRoute",
        "summary": "Return to the live version before the last promote not rolled back (the \
                    version rolled back becomes the first shadow; an administrator's token).",
        "security": admin,
        "parameters": parameter,
        "requestBody": body("RouteRollback"),
        "responses": {
            "200": route_reply("The route, rolled back."),
            "400": malformed,
            "401": unauthorized_admin,
            "403": forbidden,
            "404": error(&format!("No route has this name (`not_found`), or {no_store}.")),
            "409": error("No promote is left to roll back, or the route changed meanwhile \
                          (`route_conflict`)."),
            "413": error("The body is over 64 KiB (`body_too_large`)."),
            "422": invalid("an unknown field, a reason too long"),
            "503": unavailable
        }
    }});
    paths["/v1/routes/{route}/history"] = json!({"get": {
        "operationId": "routeHistory",
        "summary": "Every change of the route, oldest first: created, shadows changed, \
                    promoted, rolled back (who, when, from, to, reason, forced).",
        "security": secured,
        "parameters": parameter,
        "responses": {
            "200": {"description": "The changes.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["route", "changes"],
                "properties": {
                    "route": {"type": "string"},
                    "changes": {"type": "array",
                                "items": {"$ref": "#/components/schemas/RouteChange"}}
                }
            }}}},
            "401": unauthorized,
            "403": error("A reviewer's token (`forbidden`)."),
            "404": error(&format!("No route has this name (`not_found`), or {no_store}.")),
            "503": error("The store cannot be read (`store_unavailable`). Retry after \
                          `Retry-After` seconds.")
        }
    }});
}
