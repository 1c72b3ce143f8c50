#!/usr/bin/env bash
# The Prometheus side of `jevjudge serve`:
#   1. installs Debian's `prometheus` with apt-get when promtool is missing (ensure_promtool in
#      scripts/lib.sh; needs root or sudo; a failed install fails this script);
#   2. `promtool check rules` on deploy/prometheus/jevjudge.rules.yml;
#   3. `promtool test rules` on deploy/prometheus/jevjudge.rules.test.yml (each alert fires on
#      the series it should, and only there);
#   4. builds jevjudge and starts `jevjudge serve` with a review queue (the sms-spam recording
#      replayed, a SQLite store, INCONCLUSIVE and FAIL queued, PASS sampled at 0.3) and a route
#      with a shadow version, posts 30 states under the route, and a reviewer decides one
#      queued item;
#   5. scrapes GET /metrics: the store's, the queue's and the shadows' families must be there, and
#      `promtool check metrics` must accept the exposition without a finding. promtool lints the
#      classic text format (0.0.4), which names a counter's family with its `_total` and has no
#      `# EOF`, while the service answers OpenMetrics 1.0: exactly those two differences are
#      converted before the lint. Saved to target/promtool/metrics.txt (as scraped) and
#      metrics.classic.txt (as linted).
# Part of scripts/test.sh. Run: scripts/promtool.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

step() { printf '==> %s\n' "$*"; }
fail() { printf 'promtool: FAILED: %s\n' "$*" >&2; exit 1; }
settings RUST_LOG=warn
export RUST_LOG

ensure_promtool
step "$("$PROMTOOL" --version 2>&1 | head -n 1)"

step "promtool check rules deploy/prometheus/jevjudge.rules.yml"
"$PROMTOOL" check rules deploy/prometheus/jevjudge.rules.yml

step "promtool test rules deploy/prometheus/jevjudge.rules.test.yml"
"$PROMTOOL" test rules deploy/prometheus/jevjudge.rules.test.yml

step "cargo build --bin jevjudge"
if [[ -z "${JEVJUDGE:-}" ]]; then
    build_jevjudge debug
fi
make_work promtool
rm "$WORK/definitions/refund.toml"
cp examples/sms-spam/definition.toml "$WORK/definitions/sms-spam.toml"
# A route whose shadow is the single-cut variant (same question: scored on the live answers),
# so the shadow families are in the scrape too.
cp examples/sms-spam/definition-cut-0.5.toml "$WORK/definitions/sms-spam-cut.toml"
printf '[[route]]\nname = "sms-spam"\nlive = "sms-spam-0.1.0"\nshadows = ["sms-spam-0.1.0-cut-0.5"]\n' \
    >"$WORK/routes.toml"
export JEVJUDGE_PROMTOOL_REVIEWERS="ana:tok-ana-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
token=${JEVJUDGE_PROMTOOL_REVIEWERS#ana:}

step "jevjudge serve with a review queue (sms-spam replayed, SQLite store)"
spawn_listening "$WORK/serve.out" "$JEVJUDGE" serve --definitions "$WORK/definitions" \
    --addr 127.0.0.1:0 --replay examples/sms-spam/recordings.jevl --model jev-1.13.0 \
    --store "sqlite:$WORK/reviews.db" --store-state --routes "$WORK/routes.toml" \
    --queue-statuses INCONCLUSIVE,FAIL \
    --sample-pass 0.3 --reviewer-tokens-env JEVJUDGE_PROMTOOL_REVIEWERS
url=$LISTEN_URL

out=target/promtool
mkdir -p "$out"
step "30 reviews, one decision, GET /metrics"
python3 - "$url" "$token" examples/sms-spam/cases.jsonl "$out/metrics.txt" <<'PY'
import json, sys, time, urllib.request
sys.path.insert(0, "scripts")
from http_json import call

url, token, cases_path, out = sys.argv[1:5]
cases = [json.loads(line) for line in open(cases_path, encoding="utf-8") if line.strip()][:30]
for case in cases:
    status, answer = call(url, "POST", "/v1/reviews/sms-spam", {"state": case["state"]})
    if status != 200:
        sys.exit(f"POST: {status} {answer}")
status, item = call(url, "POST", "/v1/queue/claim", {}, token=token)
if status != 200:
    sys.exit(f"claim: {status} {item}")
findings = {criterion["id"]: False for criterion in item["criteria"]}
status, answer = call(url, "POST", f"/v1/queue/{item['item']}/decision", {"findings": findings},
                      token=token)
if status != 200:
    sys.exit(f"decision: {status} {answer}")
shadow = 'jevjudge_shadow_reviews_total{route="sms-spam",version="sms-spam-0.1.0-cut-0.5",outcome='
for _ in range(100):  # the shadows are written after each answer
    with urllib.request.urlopen(url + "/metrics", timeout=30) as response:
        text = response.read().decode()
    ended = sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                if line.startswith(shadow))
    if ended == 30:
        break
    time.sleep(0.1)
open(out, "w", encoding="utf-8").write(text)
lines = text.splitlines()
for prefix in ["jevjudge_store_ready 1", 'jevjudge_queue_pending{version="sms-spam-0.1.0"} ',
               'jevjudge_queue_oldest_pending_seconds{version="sms-spam-0.1.0"} ',
               "jevjudge_queue_adjudications_pending 0",
               'jevjudge_queue_decisions_total{outcome="answered"} 1',
               'jevjudge_queue_decisions_total{outcome="cant_tell"} 0',
               "jevjudge_queue_leases_expired_total 0", shadow + '"agree"} ',
               shadow + '"shed"} 0',
               'jevjudge_shadow_agreement{route="sms-spam",version="sms-spam-0.1.0-cut-0.5"} ']:
    if not any(line.startswith(prefix) for line in lines):
        sys.exit(f"no sample {prefix!r} in /metrics:\n{text}")
print("\n".join(line for line in lines if line.startswith(("jevjudge_queue_p", "jevjudge_queue_o",
      "jevjudge_queue_a", "jevjudge_queue_d", "jevjudge_queue_l", "jevjudge_store",
      "jevjudge_shadow"))))
PY

step "promtool check metrics < $out/metrics.classic.txt (the scrape in the classic text format)"
python3 - "$out/metrics.txt" "$out/metrics.classic.txt" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
lines = text.splitlines()
if lines[-1:] != ["# EOF"]:
    sys.exit("the exposition does not end with # EOF")
counters = set(re.findall(r"^# TYPE (\S+) counter$", text, re.M))
classic = []
for line in lines[:-1]:
    match = re.match(r"^# (HELP|TYPE) (\S+)( .*)?$", line)
    if match and match.group(2) in counters:
        line = f"# {match.group(1)} {match.group(2)}_total{match.group(3) or ''}"
    classic.append(line)
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(classic) + "\n")
PY
findings=$("$PROMTOOL" check metrics <"$out/metrics.classic.txt" 2>&1) ||
    fail "promtool check metrics refused the exposition: $findings"
[[ -z "$findings" ]] || fail "promtool check metrics found: $findings"
echo "no findings"
step "promtool: all checks passed"
