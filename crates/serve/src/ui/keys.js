// Keyboard shortcuts for the jevjudge review pages (loaded from /ui/static/keys.js; the CSP
// allows no inline script). Item page: j/k move between criteria, 1/2/3 answer the focused one
// (holds / does not hold / can't tell) and move on, n goes to the note, Esc leaves it,
// Ctrl+Enter (or Enter outside the note) saves. Queue and result pages: c claims the next item.
"use strict";
// A page shown again by Back (from the back/forward cache) is read again: the queue page must
// list the item just claimed, not what it held before.
(function () {
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) { window.location.reload(); }
  });
  var navigation = window.performance && performance.getEntriesByType
    ? performance.getEntriesByType("navigation")[0] : null;
  if (navigation && navigation.type === "back_forward" && navigation.transferSize === 0) {
    window.location.reload();
  }
})();
// Every <time class="local" datetime="…Z"> shows its time in the reader's own time zone.
(function () {
  var times = document.querySelectorAll("time.local[datetime]");
  for (var i = 0; i < times.length; i += 1) {
    var at = new Date(times[i].getAttribute("datetime"));
    if (!isNaN(at.getTime())) {
      times[i].textContent = at.toLocaleString(undefined, {
        year: "numeric", month: "short", day: "numeric",
        hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short"
      });
      times[i].title = times[i].getAttribute("datetime");
    }
  }
})();
(function () {
  var criteria = Array.prototype.slice.call(document.querySelectorAll("fieldset.criterion"));
  var form = document.getElementById("decision");
  var claim = document.getElementById("claim");
  var note = document.getElementById("note");
  var current = 0;

  function focus(index) {
    if (!criteria.length) { return; }
    current = Math.max(0, Math.min(criteria.length - 1, index));
    criteria[current].focus();
  }
  function focused() {
    var active = document.activeElement;
    for (var i = 0; i < criteria.length; i += 1) {
      if (criteria[i] === active || criteria[i].contains(active)) { return i; }
    }
    return current;
  }
  function submit(target) {
    if (target.requestSubmit) { target.requestSubmit(); } else { target.submit(); }
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.metaKey) { return; }
    var inText = event.target === note;
    if (event.key === "Enter" && (event.ctrlKey || !inText) && form) {
      if (event.target.tagName === "BUTTON" || event.target.tagName === "A") { return; }
      event.preventDefault();
      submit(form);
      return;
    }
    if (inText) {
      if (event.key === "Escape") { note.blur(); focus(current); }
      return;
    }
    if (event.ctrlKey || event.target.tagName === "SELECT" || event.target.tagName === "INPUT" && event.target.type === "password") { return; }
    if (!form) {
      if (event.key === "c" && claim) { event.preventDefault(); submit(claim); }
      return;
    }
    var index = focused();
    if (event.key === "j") { event.preventDefault(); focus(index + 1); }
    else if (event.key === "k") { event.preventDefault(); focus(index - 1); }
    else if (event.key === "n" && note) { event.preventDefault(); note.focus(); }
    else if (event.key === "1" || event.key === "2" || event.key === "3") {
      var radios = criteria[index] ? criteria[index].querySelectorAll("input[type=radio]") : [];
      var radio = radios[Number(event.key) - 1];
      if (radio) {
        event.preventDefault();
        radio.checked = true;
        if (index + 1 < criteria.length) { focus(index + 1); } else if (note) { criteria[index].focus(); }
      }
    }
  });

  if (criteria.length) { focus(0); }
})();
