#!/usr/bin/env bash
# The reviewer pages (/ui/) in a real browser:
#   1. builds jevjudge; installs Debian's `chromium` and `chromium-driver` with apt-get when
#      missing (needs root or sudo; ensure_chromium in scripts/lib.sh);
#   2. starts `jevjudge serve` on the FAKE backend (every answer is made up by a hash: this
#      checks the pages, never a verdict) with a SQLite store, the state kept, every verdict
#      queued (INCONCLUSIVE and FAIL, and PASS sampled at rate 1), each for two reviewers
#      (--second-review 1), with two reviewer tokens and a lead's (name:token:lead);
#   3. posts 3 support-draft-v1 reviews and one refund-answer-v1 review whose answer holds
#      `<script>`, `<img onerror=…>` and a `javascript:` link;
#   4. runs scripts/ui-check.py against chromedriver: sign in, the queue, claim, Back (the held
#      item is linked, its lease end in local time, and a claim resumes it), decide with the
#      keyboard shortcuts, the result, the item gone from the queue; the XSS item with
#      window.__xss undefined, no alert, no console error; the CSP and other headers; then two
#      reviewers disagree over the API and the lead adjudicates in the browser: both answers and
#      notes, no figure of Jev's;
#   5. saves screenshots to target/ui-check/{sign-in,queue,held,item,result,xss,adjudication}.png.
# Part of scripts/test.sh. Run: scripts/ui-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

out=target/ui-check
mkdir -p "$out"
step() { printf '==> %s\n' "$*"; }
fail() { printf 'ui-check: FAILED: %s\n' "$*" >&2; exit 1; }

step "cargo build --bin jevjudge"
cargo build --quiet --bin jevjudge
jevjudge=target/debug/jevjudge

ensure_chromium driver
step "browser: $("$CHROMIUM" --version 2>/dev/null) · $("$CHROMEDRIVER" --version | cut -d' ' -f1-2)"

work=$(mktemp -d)
serve_pid="" driver_pid=""
on_exit() {
  [ -n "$driver_pid" ] && kill "$driver_pid" 2>/dev/null || true
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}

token="ui-check-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
export JEVJUDGE_UI_REVIEWERS="ada:$token,bob:$token-bob,lea:$token-lea:lead"
step "jevjudge serve --fake --store sqlite:… --queue-statuses INCONCLUSIVE,FAIL --sample-pass 1 --second-review 1"
"$jevjudge" serve --definitions examples/definitions --addr 127.0.0.1:0 --fake \
  --store "sqlite:$work/reviews.db" --store-state \
  --queue-statuses INCONCLUSIVE,FAIL --sample-pass 1 --second-review 1 \
  --reviewer-tokens-env JEVJUDGE_UI_REVIEWERS >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
for _ in $(seq 100); do
  grep -q 'listening on' "$work/serve.out" 2>/dev/null && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.err" >&2; fail "serve did not start"; }
  sleep 0.1
done
url=$(grep -o 'http://[0-9.:]*' "$work/serve.out" | head -1)
[ -n "$url" ] || fail "serve did not print its address"
step "service: $url"

post() {
  curl -sf -X POST "$url/v1/reviews/$1" -H 'content-type: application/json' -d "$2" >/dev/null \
    || fail "POST /v1/reviews/$1 failed"
}
for n in 1 2 3; do
  post support-draft-v1 "{\"state\": {\"request\": \"Please refund order $n if it has not shipped.\",
    \"draft\": \"Your refund for order $n is complete.\nYou will see it in 3 days.\",
    \"business_record\": {\"order\": $n, \"refund\": null, \"shipping\": \"unknown\"}}}"
done
post refund-answer-v1 '{"state": {"user_question": "Has my refund gone through?",
  "supporting_context": ["Business record: no refund has been executed"],
  "assistant_answer": "<script>window.__xss=1</script> <img src=x onerror=\"window.__xss=2\"> <a href=\"javascript:window.__xss=3\">javascript:window.__xss=3</a>"}}'
step "posted 4 reviews (1 with a script, an onerror image and a javascript: link)"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$CHROMEDRIVER" --port="$port" --allowed-ips=127.0.0.1 >"$work/driver.log" 2>&1 &
driver_pid=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/status" >/dev/null 2>&1 && break
  sleep 0.1
done

step "driving Chromium (scripts/ui-check.py)"
python3 scripts/ui-check.py "$url" "http://127.0.0.1:$port" "$token" "$out" \
  || { tail -20 "$work/serve.err" >&2; fail "browser checks"; }
step "screenshots: $(ls "$out"/*.png | tr '\n' ' ')"
