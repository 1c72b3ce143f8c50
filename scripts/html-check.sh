#!/usr/bin/env bash
# Renders the HTML report of the shipped sms-spam example in headless Chromium and checks it:
#   1. builds jevjudge and replays examples/sms-spam (offline) with --html;
#   2. installs Debian's `chromium` with apt-get when it is missing (needs root or sudo;
#      ensure_chromium in scripts/lib.sh);
#   3. dumps the rendered DOM and checks the charts are there (<svg> per chart kind, the
#      thresholds drawn, no external resource);
#   4. checks the browser logged no console error;
#   5. lays the page out at 1280 and 800 px wide and checks, in a probe copy of the page (the
#      report itself has no script): no horizontal scrollbar, no panel that scrolls sideways,
#      no chart label drawn over another label or over a dot;
#   6. saves screenshots to target/html-check/sms-spam-{1280,800}.png.
# Part of scripts/test.sh. Run: scripts/html-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

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
  --model jev-1.13.0 --overwrite --report "$out/sms-spam.json" --html "$page" >/dev/null

ensure_chromium
browser=$CHROMIUM
step "browser: $("$browser" --version 2>/dev/null || echo "$browser")"

profile=$(mktemp -d)
on_exit() { rm -rf "$profile"; }
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

# A copy of the page with a probe script that measures the laid-out page and writes what it
# found into a <pre id="probe">, read back from --dump-dom.
probe_page="$out/sms-spam.probe.html"
python3 - "$page" "$probe_page" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
probe = r"""<script>
(function () {
  const root = document.documentElement, width = root.clientWidth, found = [];
  if (root.scrollWidth > width) {
    found.push("horizontal scrollbar: the page is " + root.scrollWidth + " px wide in a " + width + " px window");
    for (const e of document.querySelectorAll("body *")) {
      const b = e.getBoundingClientRect();
      if (b.width > 0 && b.right > width + 0.5) found.push("  sticks out: <" + e.tagName.toLowerCase() + " class=" + e.className + "> to " + Math.round(b.right) + " px");
    }
  }
  for (const e of document.querySelectorAll(".panel, table, svg")) {
    if (e.scrollWidth > e.clientWidth && getComputedStyle(e).overflowX !== "visible") {
      const h = e.querySelector("h2, h3");
      found.push("scrolls sideways: <" + e.tagName.toLowerCase() + "> " + (h ? h.textContent.slice(0, 50) : "") + " (" + e.scrollWidth + " > " + e.clientWidth + ")");
    }
  }
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  for (const svg of document.querySelectorAll("svg")) {
    const texts = [...svg.querySelectorAll("text")].map(t => [t.textContent, t.getBoundingClientRect()]);
    const dots = [...svg.querySelectorAll("circle")].map(c => c.getBoundingClientRect());
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++)
        if (hit(texts[i][1], texts[j][1])) found.push("label over label in " + svg.dataset.chart + ": '" + texts[i][0] + "' / '" + texts[j][0] + "'");
      for (const d of dots)
        if (hit(texts[i][1], d)) found.push("label over a dot in " + svg.dataset.chart + ": '" + texts[i][0] + "'");
    }
  }
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = found.length ? found.join("\n") : "ok";
  document.body.appendChild(pre);
})();
</script>"""
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", probe + "\n</body>"))
PY
probe_url="file://$(pwd)/$probe_page"
problems=0
for width in 1280 800; do
  step "layout at $width px: no horizontal scrollbar, no label over another"
  timeout 120 "$browser" "${flags[@]}" --window-size="$width,1000" --dump-dom "$probe_url" \
    >"$out/probe-$width.html" 2>>"$out/console.log" || fail "chromium could not lay out the page at $width px"
  python3 - "$out/probe-$width.html" >"$out/probe-$width.txt" <<'PY'
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
print(html.unescape(m.group(1)) if m else "probe did not run")
PY
  if [ "$(cat "$out/probe-$width.txt")" != "ok" ]; then
    sed 's/^/  /' "$out/probe-$width.txt" >&2
    problems=1
  fi
  step "screenshot: $out/sms-spam-$width.png"
  timeout 120 "$browser" "${flags[@]}" --window-size="$width,$((width == 800 ? 5200 : 4000))" \
    --screenshot="$(pwd)/$out/sms-spam-$width.png" "$url" >/dev/null 2>>"$out/console.log" \
    || fail "chromium could not take the screenshot"
  [ -s "$out/sms-spam-$width.png" ] || fail "no screenshot written"
done
[ "$problems" -eq 0 ] || fail "layout problems above (details: $out/probe-*.txt)"

printf 'html-check: OK: %s <svg> charts rendered, no console errors, no horizontal scrollbar or overlapping label at 1280 and 800 px; screenshots %s\n' \
  "$svgs" "$out/sms-spam-{1280,800}.png"
