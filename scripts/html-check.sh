#!/usr/bin/env bash
# Renders the HTML report of the shipped sms-spam example in headless Chromium and checks it:
#   1. builds jevjudge and replays examples/sms-spam (offline) with --html;
#   2. installs Debian's `chromium` with apt-get when it is missing (needs root or sudo);
#   3. dumps the rendered DOM and checks the charts are there (<svg> per chart kind, the
#      thresholds drawn, no external resource);
#   4. checks the browser logged no console error;
#   5. saves a screenshot (1280x2400) to target/html-check/sms-spam.png.
# Not part of scripts/test.sh (it needs apt). Run: scripts/html-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

out=target/html-check
mkdir -p "$out"
page="$out/sms-spam.html"

step() { printf '==> %s\n' "$*"; }
fail() { printf 'html-check: FAILED: %s\n' "$*" >&2; exit 1; }

step "cargo build --bin jevjudge"
cargo build --quiet --bin jevjudge
jevjudge=target/debug/jevjudge

step "jevjudge eval --replay examples/sms-spam --html $page"
"$jevjudge" eval --definition examples/sms-spam/definition.toml \
  --cases examples/sms-spam/cases.jsonl --replay examples/sms-spam/recordings.jevl \
  --model jev-1.13.0 --report "$out/sms-spam.json" --html "$page" >/dev/null

browser=""
for candidate in chromium chromium-browser; do
  if command -v "$candidate" >/dev/null 2>&1; then browser=$(command -v "$candidate"); break; fi
done
if [ -z "$browser" ]; then
  step "installing Debian's chromium (apt-get)"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
  browser=$(command -v chromium)
fi
step "browser: $("$browser" --version 2>/dev/null || echo "$browser")"

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$profile")
url="file://$(pwd)/$page"

step "render: --dump-dom"
timeout 120 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "$url" \
  >"$out/dom.html" 2>"$out/console.log" || fail "chromium could not render $page (see $out/console.log)"

count() { grep -o "$1" "$out/dom.html" | wc -l; }
svgs=$(count '<svg ')
[ "$svgs" -ge 4 ] || fail "expected at least 4 <svg> charts in the rendered page, found $svgs"
for chart in scenarios reliability histogram review-time; do
  [ "$(count "data-chart=\"$chart\"")" -ge 1 ] || fail "no $chart chart in the rendered page"
done
[ "$(count 'class="threshold"')" -eq 2 ] || fail "the two thresholds are not drawn on the histogram"
grep -q 'jevjudge report' "$out/dom.html" || fail "no title in the rendered page"
if grep -Eq '(src|href)="(https?:)?//' "$out/dom.html"; then
  fail "the page refers to an external resource"
fi

step "console: no errors"
if grep -Ei 'CONSOLE\(|console.*(error|uncaught)|Uncaught' "$out/console.log" >"$out/console-errors.log"; then
  cat "$out/console-errors.log" >&2
  fail "the browser logged console errors (see $out/console.log)"
fi

step "screenshot: $out/sms-spam.png"
timeout 120 "$browser" "${flags[@]}" --window-size=1280,2400 --screenshot="$(pwd)/$out/sms-spam.png" \
  "$url" >/dev/null 2>>"$out/console.log" || fail "chromium could not take the screenshot"
[ -s "$out/sms-spam.png" ] || fail "no screenshot written"

printf 'html-check: OK: %s <svg> charts rendered, no console errors; screenshot %s\n' \
  "$svgs" "$out/sms-spam.png"
