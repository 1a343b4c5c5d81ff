// whichgpu: small enhancements; every page works without this file.
// 1. Sortable tables (table[data-sortable]); 2. table filter (input[data-filter-for]);
// 3. live forms (form[data-live]) that refresh the results as inputs change;
// 4. after a form is submitted, the answer (#results, or the #error box) is scrolled to the
//    top of the screen and focused, so a laptop's 768 px or a phone shows it, and a screen
//    reader reads it, instead of leaving it below the form;
// 5. "Of what" follows the workload (select[data-units-for]): images for image generation,
//    steps or training tokens for fine-tuning, and the amount's hint follows the unit;
// 6. a form[data-carry-from] (the pasted config.json) sends what is typed in the other form
//    too (the context typed above the paste is kept, not reset to the config's 4,096);
// 7. while an answer is computed (a submit, or a live form's refresh) the page says so: the
//    form and the answer are aria-busy, a "Computing the answer…" status shows next to the
//    button and the button is disabled (an answer can take seconds), until the page changes.
(function () {
  "use strict";

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) return "";
    var v = cell.getAttribute("data-sort");
    if (v !== null && v !== "" && !isNaN(Number(v))) return Number(v);
    return (cell.textContent || "").trim().toLowerCase();
  }

  function makeSortable(table) {
    var head = table.tHead;
    if (!head || !table.tBodies.length) return;
    Array.prototype.forEach.call(head.rows[0].cells, function (th, index) {
      var link = th.querySelector("a");
      var label = (th.textContent || "").trim();
      if (!label || label === "#") return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.textContent = label;
      th.textContent = "";
      th.appendChild(button);
      if (link) th.setAttribute("data-href", link.getAttribute("href"));
      button.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(head.rows[0].cells, function (c) {
          c.removeAttribute("aria-sort");
        });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, index), y = cellValue(b, index);
          if (x < y) return asc ? -1 : 1;
          if (x > y) return asc ? 1 : -1;
          return 0;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  function makeFilter(input) {
    var table = document.getElementById(input.getAttribute("data-filter-for"));
    if (!table) return;
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var text = (row.textContent || "").toLowerCase();
        row.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
      });
    });
  }

  function makeLive(form) {
    var timer = null;
    var pending = null;
    function refresh() {
      var params = new URLSearchParams(new FormData(form));
      Array.from(params.keys()).forEach(function (k) {
        if (params.get(k) === "") params.delete(k);
      });
      var url = form.getAttribute("action") + "?" + params.toString();
      if (pending) pending.abort();
      pending = new AbortController();
      var mine = pending;
      var results = document.getElementById("results");
      if (results) results.setAttribute("aria-busy", "true");
      fetch(url, { headers: { "Accept": "text/html" }, signal: pending.signal })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = doc.getElementById("results") || doc.getElementById("error");
          var old = document.getElementById("results") || document.getElementById("error");
          if (fresh && old) {
            old.replaceWith(document.importNode(fresh, true));
            history.replaceState(null, "", url);
          }
        })
        .catch(function () { /* aborted or offline: the submit button still works */ })
        .then(function () {
          if (pending !== mine) return;  // a newer refresh is on its way
          var now = document.getElementById("results");
          if (now) now.setAttribute("aria-busy", "false");
        });
    }
    function later() {
      clearTimeout(timer);
      timer = setTimeout(refresh, 400);
    }
    form.addEventListener("input", later);
    form.addEventListener("change", later); // a select (the price set) too, in every browser
  }

  function followTask(unit) {
    var task = document.getElementById(unit.getAttribute("data-units-for"));
    if (!task || !unit.form) return;
    var hint = document.getElementById("h-amount");
    function showUnit() {
      if (hint) {
        var text = hint.getAttribute("data-hint-" + unit.value.replace(/_/g, "-"));
        if (text) hint.textContent = text;
      }
      unit.form.querySelectorAll("[data-for-unit]").forEach(function (el) {
        var on = el.getAttribute("data-for-unit") === unit.value;
        el.hidden = !on;
        el.querySelectorAll("input, select").forEach(function (i) { i.disabled = !on; });
      });
    }
    // each task's own default unit (pre-training counts tokens, not steps): taken on every
    // change of task until the person picks a unit themselves
    var defaults = {};
    (unit.getAttribute("data-defaults") || "").split(" ").forEach(function (pair) {
      var kv = pair.split(":");
      if (kv.length === 2) defaults[kv[0]] = kv[1];
    });
    var touched = false;
    function showTask(event) {
      var first = null, keep = false, wanted = null;
      Array.prototype.forEach.call(unit.options, function (o) {
        var ok = (" " + o.getAttribute("data-tasks") + " ").indexOf(" " + task.value + " ") >= 0;
        o.hidden = !ok;
        o.disabled = !ok;
        if (ok && first === null) first = o;
        if (ok && o.value === defaults[task.value]) wanted = o;
        if (ok && o.selected) keep = true;
      });
      if (!(keep && (touched || !event))) {  // on load: the unit the page was given
        if (wanted) wanted.selected = true;
        else if (!keep && first) first.selected = true;
      }
      showUnit();
    }
    task.addEventListener("change", showTask);
    unit.addEventListener("change", function () { touched = true; showUnit(); });
    showTask();
  }

  function carryFields(form) {
    var source = document.getElementById(form.getAttribute("data-carry-from"));
    var skip = (form.getAttribute("data-carry-skip") || "").split(/\s+/);
    if (!source) return;
    form.addEventListener("submit", function () {
      form.querySelectorAll("input[data-carried]").forEach(function (i) { i.remove(); });
      new FormData(source).forEach(function (value, name) {
        if (skip.indexOf(name) >= 0 || typeof value !== "string" || value === "") return;
        var i = document.createElement("input");
        i.type = "hidden";
        i.name = name;
        i.value = value;
        i.setAttribute("data-carried", "");
        form.appendChild(i);
      });
    });
  }

  function busyText() {
    var main = document.getElementById("main");
    return (main && main.getAttribute("data-busy-text")) || "…";
  }

  function setBusy(form, on) {
    var button = form.querySelector("button[type=submit], button:not([type])");
    var status = form.querySelector(".busy");
    if (on && !status) {
      status = document.createElement("span");
      status.className = "busy";
      status.setAttribute("role", "status");
      status.textContent = busyText();
      if (button) button.insertAdjacentElement("afterend", status);
      else form.appendChild(status);
    }
    if (status) status.hidden = !on;
    form.setAttribute("aria-busy", on ? "true" : "false");
    var results = document.getElementById("results");
    if (results) results.setAttribute("aria-busy", on ? "true" : "false");
    if (button) {
      // after the submit has read the form: a disabled button would drop its name=value
      if (on) setTimeout(function () { button.disabled = true; }, 0);
      else button.disabled = false;
    }
  }

  function showWork(form) {
    form.addEventListener("submit", function (e) {
      // a download (the task file) leaves the page as it is: nothing to wait for there
      if (e.defaultPrevented || form.target === "_blank" || form.hasAttribute("data-no-busy")) {
        return;
      }
      setBusy(form, true);
    });
  }

  var SUBMITTED = "whichgpu:submitted";

  function rememberSubmit(form) {
    form.addEventListener("submit", function () {
      try { sessionStorage.setItem(SUBMITTED, location.pathname); } catch (e) { /* private */ }
    });
  }

  function revealAnswer() {
    var submitted = null;
    try {
      submitted = sessionStorage.getItem(SUBMITTED);
      sessionStorage.removeItem(SUBMITTED);
    } catch (e) { /* storage off: only #results in the address reveals */ }
    var target = document.getElementById("error") || document.getElementById("results");
    var asked = location.hash === "#results" || location.hash === "#error";
    if (!target || (submitted === null && !asked)) return;
    var heading = target.querySelector("h2, h3") || target;
    if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
    target.scrollIntoView({ block: "start" });
    heading.focus({ preventScroll: true });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("select[data-units-for]").forEach(followTask);
    document.querySelectorAll("form[data-carry-from]").forEach(carryFields);
    document.querySelectorAll("form").forEach(rememberSubmit);
    document.querySelectorAll("form").forEach(showWork);
    // back to a page kept in the browser's cache: it is no longer busy
    window.addEventListener("pageshow", function (e) {
      if (e.persisted) document.querySelectorAll("form[aria-busy=true]").forEach(function (f) {
        setBusy(f, false);
      });
    });
    revealAnswer();
    document.querySelectorAll("table[data-sortable]").forEach(makeSortable);
    document.querySelectorAll("input[data-filter-for]").forEach(makeFilter);
    document.querySelectorAll("form[data-live]").forEach(makeLive);
    document.documentElement.classList.add("js");
  });
})();
