#!/usr/bin/env bash
# The whole review loop, end to end, with figures at each step:
#
#   bash scripts/review-loop.sh
#
# 1. `jevjudge serve` on the sms-spam recording (replay backend: TypeSafe's hosted Jev
#    `jev-1.13.0` recorded by jevassert; no model is called) with a SQLite store keeping state,
#    queueing the INCONCLUSIVE reviews for people (QUEUE_STATUSES, default INCONCLUSIVE,FAIL)
#    and a seeded share of the PASS ones (SAMPLE_PASS, default 0.5). The uncertain band alone
#    (25 of the 150) is too small for calibrate to recommend thresholds at any useful
#    precision target (docs/benchmarks.md has its figures), so by default the FAIL verdicts
#    and half the PASS ones are reviewed too: PASS and FAIL precision are measured as well.
# 2. The 150 states of examples/sms-spam/cases.jsonl are posted, each with its case id as
#    `reference`; counts per status and the queue's size.
# 3. A scripted reviewer (Python, the reviewer API over HTTP) claims each queued item, finds
#    its case by the state it shows (a claim is blind: no review id, no reference) and answers
#    from that case's label (`expected_findings`): the people of the loop, played by the
#    corpus's labels. (Two cases share one text, with one label.) Jev's verdict is read from
#    the decision's answer, which reveals it once saved. With SECOND_REVIEW a share of the
#    items gets a second copy, which a second scripted reviewer (another person to the queue)
#    claims and answers the same way.
# 4. `jevjudge reviews export --labelled` writes the decided items as cases + recordings.
# 5. `jevjudge eval --replay` and `jevjudge calibrate --write-definition` on the exported set.
# 6. The new definition goes into serve's definitions directory; `kill -HUP` reloads it; GET
#    /v1/definitions shows the new version, and a review under it answers.
# 7. The route `sms-spam` (PUT with an administrator's token): live on the version the loop
#    started with, the calibrated version as its shadow; the 150 states posted to the route;
#    `jevjudge routes shadow` shows the evidence (every live review shadowed, agreement, flips).
# 8. `jevjudge routes promote` makes the calibrated version live (the gate: at least 100
#    shadowed reviews, no more labelled false PASS than live); within the route cache's 2 s
#    the service reviews under it, and the old version is its shadow.
# 9. `POST /v1/routes/sms-spam/rollback` returns to the old version; `jevjudge routes history`
#    lists the creation, the promote and the rollback.
#
# Settings (environment): QUEUE_STATUSES (INCONCLUSIVE,FAIL), SAMPLE_PASS (0.5), SECOND_REVIEW
# (0: the share of queued reviews that get a second reviewer), JEVJUDGE (a built
# binary; default: the debug build of this tree, built first), KEEP (1 keeps the work directory
# and prints it).
#
# Exits non-zero when a step's figures are wrong: a POST not answered by replay, nothing
# queued or a queue that does not fit the policy, an item left undecided, an export whose
# case count is not the decided count (or that leaves anything out), an eval with errors or a
# total that is not the export's, calibrate writing no definition, the reload not serving
# the new version with every state answered, a route review not shadowed, a promote or a
# rollback not in force within 3 s, or a history without its three changes.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
settings QUEUE_STATUSES=INCONCLUSIVE,FAIL SAMPLE_PASS=0.5 SECOND_REVIEW=0 KEEP=0 RUST_LOG=warn
export RUST_LOG
if [[ -z "${JEVJUDGE:-}" ]]; then
    build_jevjudge debug
fi
JEVJUDGE=$(cd "$(dirname "$JEVJUDGE")" && pwd)/$(basename "$JEVJUDGE")
make_work review-loop
on_exit() {
    # Keep the work directory (KEEP=1): take it from lib.sh's cleanup.
    if [[ "$KEEP" == 1 ]]; then echo "work directory kept: $WORK"; WORK=""; fi
}
rm "$WORK/definitions/refund.toml"
cp examples/sms-spam/definition.toml "$WORK/definitions/sms-spam.toml"
STORE="sqlite:$WORK/reviews.db"
export JEVJUDGE_LOOP_REVIEWERS="loop-reviewer:tok-loop-$(od -An -N8 -tx8 /dev/urandom | tr -d ' '),second:tok-second-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
REVIEWER_TOKEN=${JEVJUDGE_LOOP_REVIEWERS#loop-reviewer:}
REVIEWER_TOKEN=${REVIEWER_TOKEN%%,*}
SECOND_TOKEN=${JEVJUDGE_LOOP_REVIEWERS##*,second:}
export JEVJUDGE_LOOP_ADMIN="loop-admin:tok-admin-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
ADMIN_TOKEN=${JEVJUDGE_LOOP_ADMIN#loop-admin:}

echo "== 1. serve: sms-spam recording (replay, jev-1.13.0), store $STORE, queue $QUEUE_STATUSES + PASS sampled at $SAMPLE_PASS"
spawn_listening "$WORK/serve.out" "$JEVJUDGE" serve --definitions "$WORK/definitions" \
    --addr 127.0.0.1:0 --replay examples/sms-spam/recordings.jevl --model jev-1.13.0 \
    --store "$STORE" --store-state --queue-statuses "$QUEUE_STATUSES" --sample-pass "$SAMPLE_PASS" \
    --second-review "$SECOND_REVIEW" \
    --reviewer-tokens-env JEVJUDGE_LOOP_REVIEWERS --admin-token-env JEVJUDGE_LOOP_ADMIN
SERVE_PID=$LISTEN_PID
URL=$LISTEN_URL
echo "serve at $URL (pid $SERVE_PID)"

echo "== 2. post the 150 states with their case ids as references"
echo "== 3. the scripted reviewer claims every queued item and answers from the case labels"
python3 - "$URL" "$REVIEWER_TOKEN" examples/sms-spam/cases.jsonl "$QUEUE_STATUSES" "$WORK/decided.txt" "$SECOND_TOKEN" <<'PY'
import collections, functools, json, sys
sys.path.insert(0, "scripts")
import http_json

url, token, cases_path = sys.argv[1], sys.argv[2], sys.argv[3]
second_token = sys.argv[6]
queued_statuses = sys.argv[4].upper().split(",")
call = functools.partial(http_json.call, url)  # (method, path, body=None, token=None)

cases = [json.loads(line) for line in open(cases_path, encoding="utf-8") if line.strip()]
state_key = lambda state: json.dumps(state, sort_keys=True)
by_state = {state_key(case["state"]): case for case in cases}
statuses = collections.Counter()
for case in cases:
    status, verdict = call("POST", "/v1/reviews/sms-spam-0.1.0",
                           {"state": case["state"], "reference": case["id"]})
    if status != 200:
        sys.exit(f"POST {case['id']}: {status} {verdict}")
    if verdict.get("backend") != "replay":
        sys.exit(f"expected the replay backend, got {verdict.get('backend')}")
    statuses[verdict["status"]] += 1
print(f"posted: {sum(statuses.values())}  " +
      "  ".join(f"{s}: {statuses[s]}" for s in ("PASS", "FAIL", "INCONCLUSIVE", "ERROR")))
status, stats = call("GET", "/v1/queue/stats", token=token)
queued = sum(stats["pending_by_version"].values())
print(f"queued items: {queued} (pending by version: {stats['pending_by_version']}; a second "
      f"review is a second item of the same review)")
by_status = sum(statuses[s] for s in queued_statuses)
if queued == 0:
    sys.exit("nothing was queued")
if queued < by_status or queued > 2 * (by_status + statuses["PASS"]):
    sys.exit(f"queued {queued} does not fit the policy")

def review_all(token):
    """Claims and decides items until none is left for this reviewer: (items, reviews seen)."""
    decided, seen = 0, set()
    while True:
        status, item = call("POST", "/v1/queue/claim", {}, token=token)
        if status == 204:
            return decided, seen
        if status != 200:
            sys.exit(f"claim: {status} {item}")
        if any(hidden in json.dumps(item) for hidden in ("yes_probability", "review_id", "reason")):
            sys.exit("the claim is not blind")
        case = by_state[state_key(item["state"])]
        findings = {c["id"]: case["expected_findings"].get(c["id"]) for c in item["criteria"]}
        status, answer = call("POST", f"/v1/queue/{item['item']}/decision",
                              {"findings": findings, "note": f"label of {case['id']}"}, token=token)
        if status != 200:
            sys.exit(f"decision: {status} {answer}")
        jev_status[answer["status_by_jev"]] += 1
        labelled["spam" if findings["spam"] else "ham"] += 1
        decided += 1
        seen.add(state_key(item["state"]))

labelled, jev_status = collections.Counter(), collections.Counter()
first, reviews = review_all(token)
second, second_reviews = review_all(second_token)
status, stats = call("GET", "/v1/queue/stats", token=token)
print(f"decided: {first} items by the first reviewer, {second} second reviews by another "
      f"(labelled spam {labelled['spam']}, ham {labelled['ham']}; Jev's verdicts "
      f"{dict(jev_status)}); stats: pending {sum(stats['pending_by_version'].values())}, "
      f"claimed {stats['claimed']}, decided {stats['decided']}")
if (first + second != queued or stats["decided"] != queued
        or sum(stats["pending_by_version"].values()) != 0 or not second_reviews <= reviews):
    sys.exit("not every queued item was decided")
print(f"queued reviews: {first} ({','.join(queued_statuses)}: {by_status}; PASS sampled: "
      f"{first - by_status})")
open(sys.argv[5], "w").write(f"{first}\n")
PY

echo "== 4. export the labelled set"
"$JEVJUDGE" reviews export --store "$STORE" --labelled --out "$WORK/labelled" | tee "$WORK/export.txt"
EXPORTED=$(wc -l <"$WORK/labelled/cases.jsonl")
DECIDED=$(cat "$WORK/decided.txt")
echo "exported: $EXPORTED cases, $(wc -l <"$WORK/labelled/recordings.jevl") records"
if [[ "$EXPORTED" -ne "$DECIDED" ]]; then
    echo "the export has $EXPORTED cases for $DECIDED decided items" >&2
    exit 1
fi

echo "== 5. eval and calibrate on the exported set (the reviewed band)"
"$JEVJUDGE" eval --definition "$WORK/definitions/sms-spam.toml" \
    --cases "$WORK/labelled/cases.jsonl" --replay "$WORK/labelled/recordings.jevl" \
    --model jev-1.13.0 --report "$WORK/eval.json" | tail -n 12
python3 - "$WORK/eval.json" "$EXPORTED" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
o = report["overall"]
share = lambda x: "n/a" if x is None else f"{x:.4f}"
print(f"eval: {o['total']} cases, {o['correct']} correct, {o['incorrect']} incorrect, "
      f"{o['abstained']} abstained; accuracy {share(o['accuracy'])}, coverage "
      f"{share(o['coverage'])}, decided accuracy {share(o['decided_accuracy'])}")
if o["total"] != int(sys.argv[2]) or o["correct"] + o["incorrect"] + o["abstained"] != o["total"]:
    sys.exit(f"eval scored {o['correct'] + o['incorrect'] + o['abstained']} of {o['total']} cases; "
             f"the export has {sys.argv[2]}")
PY
set +e
"$JEVJUDGE" calibrate --report "$WORK/eval.json" --definition "$WORK/definitions/sms-spam.toml" \
    --write-definition "$WORK/sms-spam-calibrated.toml" --min-pass-precision 0.8 \
    --min-fail-precision 0.8 --max-abstain 0.5
calibrated=$?
set -e
if [[ $calibrated -ne 0 ]]; then
    echo "calibrate wrote no definition (exit $calibrated): the loop stops before the reload" >&2
    exit 1
fi
NEW_VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$WORK/sms-spam-calibrated.toml")
echo "calibrated: version $NEW_VERSION, thresholds $(grep -E '^(fail_at_or_below|pass_at_or_above)' "$WORK/sms-spam-calibrated.toml" | tr '\n' ' ')"

echo "== 6. the new definition into serve's directory; kill -HUP $SERVE_PID"
cp "$WORK/sms-spam-calibrated.toml" "$WORK/definitions/sms-spam-calibrated.toml"
kill -HUP "$SERVE_PID"
for _ in $(seq 1 100); do
    curl -sf "$URL/v1/definitions" | grep -q "\"$NEW_VERSION\"" && break
    sleep 0.05
done
curl -sf "$URL/v1/definitions" >"$WORK/definitions.json"
python3 - "$WORK/definitions.json" <<'PY'
import json, sys
for d in json.load(open(sys.argv[1]))["definitions"]:
    c = d["criteria"][0]
    print(f"served: {d['version']}: {c['id']} fail_at_or_below {c['fail_at_or_below']}, "
          f"pass_at_or_above {c['pass_at_or_above']}")
PY
curl -sf "$URL/v1/definitions" | grep -q "\"$NEW_VERSION\"" || { echo "the new version is not served" >&2; exit 1; }
python3 - "$URL" "$NEW_VERSION" examples/sms-spam/cases.jsonl <<'PY'
import collections, json, sys, urllib.request
url, version, cases_path = sys.argv[1], sys.argv[2], sys.argv[3]
statuses = collections.Counter()
for line in open(cases_path, encoding="utf-8"):
    case = json.loads(line)
    request = urllib.request.Request(f"{url}/v1/reviews/{version}",
                                     data=json.dumps({"state": case["state"]}).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        statuses[json.load(response)["status"]] += 1
print(f"the 150 states again under {version}: " +
      "  ".join(f"{s}: {statuses[s]}" for s in ("PASS", "FAIL", "INCONCLUSIVE", "ERROR")))
if sum(statuses.values()) != 150 or statuses["ERROR"]:
    sys.exit("not every state was answered with a verdict under the new version")
PY
echo "loop closed: $NEW_VERSION is served after SIGHUP"

OLD_VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$WORK/definitions/sms-spam.toml")
echo "== 7. route sms-spam: live $OLD_VERSION, shadow $NEW_VERSION; the 150 states through the route"
admin=(-H "Authorization: Bearer $ADMIN_TOKEN" -H 'content-type: application/json')
curl -sf -X PUT "${admin[@]}" "$URL/v1/routes/sms-spam" \
    -d "{\"live\": \"$OLD_VERSION\", \"shadows\": [\"$NEW_VERSION\"]}" >/dev/null \
    || { echo "PUT /v1/routes/sms-spam was refused" >&2; exit 1; }
python3 - "$URL" sms-spam examples/sms-spam/cases.jsonl "$OLD_VERSION" <<'PY'
import collections, json, sys, urllib.request
url, route, cases_path, live = sys.argv[1:5]
versions = collections.Counter()
for line in open(cases_path, encoding="utf-8"):
    case = json.loads(line)
    request = urllib.request.Request(f"{url}/v1/reviews/{route}",
                                     data=json.dumps({"state": case["state"]}).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        versions[json.load(response)["definition_version"]] += 1
print(f"posted to /v1/reviews/{route}: " + ", ".join(f"{v}: {n}" for v, n in versions.items()))
if versions != {live: 150}:
    sys.exit(f"the route's reviews were not all judged by its live version {live}")
PY
# Shadows are judged after each answer: wait until all 150 are in the store.
for _ in $(seq 1 100); do
    "$JEVJUDGE" routes shadow --store "$STORE" --route sms-spam --json >"$WORK/shadow.json" 2>/dev/null \
        && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["reviews"]["shadowed"] >= 150 else 1)' "$WORK/shadow.json" \
        && break
    sleep 0.1
done
"$JEVJUDGE" routes shadow --store "$STORE" --route sms-spam
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["reviews"]["shadowed"] == 150 else f"{d[\"reviews\"][\"shadowed\"]} of 150 live reviews shadowed")' "$WORK/shadow.json"

echo "== 8. promote $NEW_VERSION on route sms-spam (jevjudge routes promote, on the store)"
"$JEVJUDGE" routes promote --store "$STORE" --route sms-spam --version "$NEW_VERSION" \
    --reason "calibrated on the loop's labels"
ROUTE_CHECK=$(head -n 1 examples/sms-spam/cases.jsonl | python3 -c 'import json,sys; print(json.dumps({"state": json.load(sys.stdin)["state"]}))')
route_serves() {
    # The version a review through the route is judged by, once the service's 2 s route cache
    # has read the store again.
    local want=$1 got=""
    for _ in $(seq 1 30); do
        got=$(curl -sf -H 'content-type: application/json' -d "$ROUTE_CHECK" \
            "$URL/v1/reviews/sms-spam" | python3 -c 'import json,sys; print(json.load(sys.stdin)["definition_version"])')
        [[ "$got" == "$want" ]] && { echo "route sms-spam reviews with $got"; return 0; }
        sleep 0.1
    done
    echo "route sms-spam still reviews with $got, not $want, after 3 s" >&2
    return 1
}
route_serves "$NEW_VERSION"

echo "== 9. roll back (POST /v1/routes/sms-spam/rollback); the route's history"
curl -sf -X POST "${admin[@]}" "$URL/v1/routes/sms-spam/rollback" \
    -d '{"reason": "the loop checks the way back"}' >/dev/null \
    || { echo "the rollback was refused" >&2; exit 1; }
route_serves "$OLD_VERSION"
"$JEVJUDGE" routes history --store "$STORE" --route sms-spam | tee "$WORK/history.txt"
[[ $(wc -l <"$WORK/history.txt") -eq 3 ]] || { echo "the history does not hold its three changes" >&2; exit 1; }
echo "loop closed: $NEW_VERSION shadowed on the route, promoted and rolled back"
