#!/usr/bin/env python3
"""Drives the reviewer pages (/ui/) of a running `jevjudge serve` in headless Chromium over
WebDriver (chromedriver), with nothing but Python's standard library: a WebDriver client is a
few JSON requests over HTTP. Called by scripts/ui-check.sh, which starts the service, posts the
reviews and starts chromedriver; see docs/how-to/testing.md.

Usage: ui-check.py SERVICE_URL DRIVER_URL TOKEN OUT_DIR

TOKEN is ada's; bob's is TOKEN-bob and the lead lea's TOKEN-lea (as scripts/ui-check.sh sets
them).
"""
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request

SERVICE, DRIVER, TOKEN, OUT = sys.argv[1:5]
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
CTRL, ENTER = "\ue009", "\ue007"
XSS_TEXT = '<script>window.__xss=1</script>'

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def wd(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(DRIVER + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)["value"]
    except urllib.error.HTTPError as error:
        detail = json.load(error)["value"]
        raise RuntimeError(f"{method} {path}: {detail.get('error')}: {detail.get('message', '')[:200]}")


capabilities = {
    "browserName": "chrome",
    "goog:chromeOptions": {
        "binary": os.environ.get("CHROMIUM", "/usr/bin/chromium"),
        "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-background-networking", "--disable-sync",
                 "--disable-component-update", "--window-size=1280,900", "--hide-scrollbars"],
    },
    "goog:loggingPrefs": {"browser": "ALL"},
}
session = wd("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})["sessionId"]
S = f"/session/{session}"


def go(path):
    wd("POST", S + "/url", {"url": SERVICE + path})


def url():
    return wd("GET", S + "/url")


def find(css):
    return wd("POST", S + "/element", {"using": "css selector", "value": css})[ELEMENT]


def find_all(css):
    return [e[ELEMENT] for e in wd("POST", S + "/elements", {"using": "css selector", "value": css})]


def click(css):
    wd("POST", S + f"/element/{find(css)}/click", {})


def type_into(css, text):
    wd("POST", S + f"/element/{find(css)}/value", {"text": text})


def js(script, *args):
    return wd("POST", S + "/execute/sync", {"script": script, "args": list(args)})


def keys(*sequence):
    """Presses keys one after another; a tuple is a chord (held together)."""
    actions = []
    for key in sequence:
        chord = key if isinstance(key, tuple) else (key,)
        actions += [{"type": "keyDown", "value": k} for k in chord]
        actions += [{"type": "keyUp", "value": k} for k in reversed(chord)]
    wd("POST", S + "/actions", {"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})
    time.sleep(0.2)


def text():
    return js("return document.body.innerText;")


def source():
    return js("return document.documentElement.outerHTML;")


def wait_for(predicate, what, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            check(True, what)
            return True
        time.sleep(0.1)
    check(False, what)
    return False


def screenshot(name):
    """The whole page: the window is made as tall as the page first."""
    js("window.scrollTo(0, 0);")
    wd("POST", S + "/window/rect", {"width": 1280, "height": 900})
    height = js("return document.documentElement.scrollHeight;")
    wd("POST", S + "/window/rect", {"width": 1280, "height": max(900, height + 140)})
    png = base64.b64decode(wd("GET", S + "/screenshot"))
    with open(f"{OUT}/{name}.png", "wb") as out:
        out.write(png)
    print(f"     screenshot {OUT}/{name}.png")


def console_errors():
    entries = wd("POST", S + "/se/log", {"type": "browser"})
    return [e for e in entries if e.get("level") == "SEVERE"]


def no_alert():
    try:
        wd("GET", S + "/alert/text")
        return False
    except RuntimeError as error:
        return "no such alert" in str(error)


def api(method, path, token, body=None):
    """The reviewer API: (status, JSON or None)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(SERVICE + path, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def sign_in(token):
    go("/ui/sign-in")
    type_into("#token", token)
    click("form button[type=submit]")
    wait_for(lambda: "Review queue" in text(), "signed in: the queue page shows")


def pending(version):
    """The pending count of a version, from the queue page's version list."""
    go("/ui/")
    for row in js("return Array.from(document.querySelectorAll("
                  "'table:not(.items):not(.held):not(.history):not(.both) tbody tr'))"
                  ".map(r => r.innerText);"):
        cells = row.split("\t")
        if cells and cells[0].strip() == version:
            return int(cells[1])
    return 0


try:
    # 1. Headers (read with urllib: a page's own headers are not visible to its scripts).
    with urllib.request.urlopen(SERVICE + "/ui/sign-in", timeout=10) as response:
        headers = response.headers
    csp = headers.get("Content-Security-Policy", "")
    check("default-src 'none'" in csp and "script-src 'self'" in csp
          and "frame-ancestors 'none'" in csp, f"CSP header present: {csp}")
    check(headers.get("X-Content-Type-Options") == "nosniff", "X-Content-Type-Options: nosniff")
    check(headers.get("Referrer-Policy") == "no-referrer", "Referrer-Policy: no-referrer")
    check(headers.get("Cache-Control") == "no-store", "Cache-Control: no-store")

    # 2. Sign in.
    go("/ui/")
    check(url().endswith("/ui/sign-in"), f"an anonymous visit goes to the sign-in page ({url()})")
    screenshot("sign-in")
    type_into("#token", "not-a-token")
    click("form button[type=submit]")
    # The click starts a navigation; wait for the answer page rather than read the old one.
    wait_for(lambda: "not a reviewer" in text(), "a wrong token is refused on the page")
    type_into("#token", TOKEN)
    click("form button[type=submit]")
    wait_for(lambda: "Review queue" in text(), "signed in: the queue page shows")
    cookies = wd("GET", S + "/cookie")
    session_cookie = [c for c in cookies if c["name"] == "jevjudge_ui"]
    check(len(session_cookie) == 1 and session_cookie[0]["httpOnly"]
          and session_cookie[0]["sameSite"] == "Strict" and session_cookie[0]["path"] == "/ui",
          "the session cookie is HttpOnly, SameSite=Strict, Path=/ui ("
          + str([{k: v for k, v in c.items() if k != "value"} for c in session_cookie]) + ")")
    check(js("return document.cookie;") == "", "page scripts cannot read the session cookie")

    # 3. The queue, then claim the oldest support-draft-v1 item.
    before = pending("support-draft-v1")
    check(before >= 2, f"support-draft-v1 has items pending ({before})")
    screenshot("queue")
    js("document.getElementById('version').value = arguments[0];", "support-draft-v1")
    click("#claim button[type=submit]")
    wait_for(lambda: "/ui/items/" in url(), "claim next opens an item page")
    item_url = url()
    item_id = item_url.rsplit("/", 1)[1]

    # 3b. Back: the queue page links the held item with its lease end in local time, and a
    #     claim hands it back.
    wd("POST", S + "/back", {})
    wait_for(lambda: "Your items" in text(), "after Back the queue page lists the held items")
    links = js("return Array.from(document.querySelectorAll('a.held')).map(a => a.href);")
    check(links == [item_url], f"the held item is a link to its page ({links})")
    lease = js("var t = document.querySelector('table.held time.local');"
               "return t ? [t.getAttribute('datetime'), t.textContent, t.title] : null;")
    check(lease is not None and lease[0].endswith("Z") and lease[2] == lease[0]
          and lease[1] != lease[0] and not lease[1].startswith(lease[0][:10]),
          f"the lease end is shown in local time by the page's script ({lease})")
    screenshot("held")
    click("#claim button[type=submit]")
    wait_for(lambda: url() == item_url, "claim next hands back the held item")
    wd("POST", S + "/back", {})
    wait_for(lambda: "Your items" in text(), "Back again")
    click("a.held")
    wait_for(lambda: url() == item_url, "the held item's link opens it")
    page = source()
    check("probabilit" not in text().lower().replace("probabilities are shown once", "")
          and "yes_probability" not in page and "INCONCLUSIVE" not in page,
          "the item page is blind (no probability, no verdict)")
    check(len(find_all("fieldset.criterion")) == 2, "both criteria are asked")

    # 4. Decide with the keyboard: 2 (does not hold, moves on), k (back), 1 (holds, moves on),
    #    3 (can't tell), n (note), type, Ctrl+Enter.
    keys("2")
    keys("k")
    keys("1")
    keys("3")
    checked = js("return Array.from(document.querySelectorAll('input[type=radio]:checked'))"
                 ".map(r => r.name + '=' + r.value);")
    check(checked == ["c.covers_request=holds", "c.unsupported_commitment=cant"],
          f"1/2/3 and j/k answer the focused criterion ({checked})")
    keys("n")
    keys(*"checked in the browser test")
    check(js("return document.getElementById('note').value;") == "checked in the browser test",
          "n moves to the note and typing there does not answer criteria")
    screenshot("item")
    keys((CTRL, ENTER))
    wait_for(lambda: "Saved" in text(), "Ctrl+Enter saves the decision and shows the result")
    result = text()
    check("Jev" in result and ("holds" in result) and "can't tell" in result,
          "the result page shows the reviewer's answers beside Jev's")
    check(any(ch.isdigit() for ch in result.split("Jev P(holds)")[-1]),
          "the result page shows Jev's probabilities after the decision")
    screenshot("result")

    # 5. It left the queue.
    after = pending("support-draft-v1")
    check(after == before - 1, f"the decided item left the queue ({before} -> {after})")
    open_rows = js("return Array.from(document.querySelectorAll('table.items tbody tr'))"
                   ".map(r => r.innerText).join(' ');")
    check(item_id[-8:] not in open_rows, "the decided item is not listed as open any more")
    history = js("return Array.from(document.querySelectorAll('table.history a')).map(a => a.href);")
    check(item_url in history, f"the decided item is among the reviewer's latest decisions ({history})")

    # 6. The XSS item (refund-answer-v1): nothing runs. Reading the log empties it, so the
    #    check below sees only what this page logged (the wrong token above was a 401).
    console_errors()
    go("/ui/")
    js("document.getElementById('version').value = arguments[0];", "refund-answer-v1")
    click("#claim button[type=submit]")
    wait_for(lambda: "/ui/items/" in url(), "the XSS item is claimed")
    time.sleep(0.5)
    check(js("return typeof window.__xss;") == "undefined", "window.__xss is undefined")
    check(no_alert(), "no alert is open")
    check(XSS_TEXT in text(), "the <script> in the draft is shown as text")
    check(len(find_all("main img")) == 0, "no <img> from the draft")
    check(not js("return Array.from(document.links).some(a => a.href.startsWith('javascript:'));"),
          "no javascript: link from the draft")
    # Clicking the text where the link would be does nothing either.
    keys("1")
    check(js("return typeof window.__xss;") == "undefined", "still undefined after key presses")
    screenshot("xss")
    errors = console_errors()
    check(errors == [], f"no console error ({errors})")

    # 7. Release it and sign out.
    click("form.release button")
    wait_for(lambda: "Released" in text(), "release gives the item back")
    click("header form button")
    wait_for(lambda: url().endswith("/ui/sign-in"), "sign out returns to the sign-in page")
    go("/ui/")
    check(url().endswith("/ui/sign-in"), "after signing out the queue needs a new sign-in")

    # 8. Two reviewers disagree (over the API): bob says no criterion holds on one copy of each
    #    support-draft-v1 review, ada that every one holds on the others. Each review decided
    #    by both goes to adjudication.
    bob, lea = TOKEN + "-bob", TOKEN + "-lea"
    for token, holds in ((bob, False), (TOKEN, True)):
        while True:
            status, item = api("POST", "/v1/queue/claim", token,
                               {"version": "support-draft-v1", "new": True})
            if status == 204:
                break
            findings = {c["id"]: holds for c in item["criteria"]}
            status, _ = api("POST", f"/v1/queue/{item['item']}/decision", token,
                            {"findings": findings, "note": f"note by {'bob' if token == bob else 'ada'}"})
            check(status == 200, f"the API decision is saved ({status})")
    status, stats = api("GET", "/v1/queue/stats", lea)
    waiting = stats["adjudication"]["pending"]
    check(waiting == 3, f"each support-draft-v1 review decided by both is adjudicated ({waiting})")

    # 9. The lead adjudicates in the browser: both answers and notes, nothing of Jev's.
    sign_in(lea)
    check("3 adjudications pending" in text(), "the lead's queue page counts the adjudications")
    click("form[action='/ui/adjudications/claim'] button")
    wait_for(lambda: "/ui/adjudications/" in url(), "claim adjudication opens an adjudication page")
    page, shown = source(), text()
    check("ada" in shown and "bob" in shown and "note by bob" in shown
          and ("note by ada" in shown or "checked in the browser test" in shown),
          "the adjudication page shows both reviewers' answers and notes")
    check("P(holds)" not in shown and "yes_probability" not in page and "probabilit" not in shown.lower()
          and not any(v in page for v in ("INCONCLUSIVE", ">PASS<", ">FAIL<")),
          "the adjudication page shows no figure of Jev's")
    screenshot("adjudication")
    js("document.querySelectorAll('input[type=radio][value=not]').forEach(r => r.click());")
    click("#decision button[type=submit]")
    wait_for(lambda: "the label is your decision" in text(), "the lead's decision is saved")
    status, stats = api("GET", "/v1/queue/stats", lea)
    check(stats["adjudication"]["pending"] == 2 and stats["adjudication"]["decided"] == 1,
          f"the stats count the adjudication ({stats['adjudication']})")
finally:
    wd("DELETE", S)

if failures:
    print(f"ui-check: {len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("ui-check: all browser checks passed")
