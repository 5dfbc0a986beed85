// The new-crawl form: seeds, ordered rules with the live answer of the
// rules check (GET /api/crawl-rules/check, asked as the person types),
// depth, delay and budget; POST /api/crawls, then the crawl's page.
(function () {
  "use strict";
  var L = window.L;
  var ACTIONS = ["follow", "capture", "skip"];

  function lines(id) {
    return L.$(id).value.split(/\r?\n/).map(function (s) { return s.trim(); }).filter(function (s) { return s !== ""; });
  }

  L.screen("crawl-new", function () {
    var list = L.$("rules"), form = L.$("crawl-form");
    var timer = null, asked = 0;

    function ruleItems() { return Array.prototype.slice.call(list.querySelectorAll("li.rule")); }
    function renumber() {
      ruleItems().forEach(function (li, i) {
        li.querySelector(".rule-no").textContent = String(i + 1);
        li.querySelector("select").setAttribute("aria-label", L.t("ruleAction", { n: i + 1 }));
        li.querySelector("input").setAttribute("aria-label", L.t("rulePattern", { n: i + 1 }));
        li.querySelector(".up").disabled = i === 0;
        li.querySelector(".down").disabled = i === ruleItems().length - 1;
      });
    }
    function addRule(action, pattern, focus) {
      var sel = L.el("select", { className: "rule-action" });
      ACTIONS.forEach(function (a) { sel.appendChild(L.el("option", { value: a }, L.t("action_" + a))); });
      sel.value = action;
      var input = L.el("input", { className: "rule-pattern", value: pattern, autocomplete: "off", spellcheck: "false", placeholder: "same-origin" });
      var li = L.el("li", { className: "rule" },
        L.el("span", { className: "rule-no", "aria-hidden": "true" }), sel, input,
        L.el("span", { className: "rule-tools" },
          L.el("button", { type: "button", className: "up", title: L.t("moveUp"), "aria-label": L.t("moveUp"), onclick: function () { move(li, -1); } }, "↑"),
          L.el("button", { type: "button", className: "down", title: L.t("moveDown"), "aria-label": L.t("moveDown"), onclick: function () { move(li, 1); } }, "↓"),
          L.el("button", { type: "button", className: "remove", title: L.t("removeRule"), "aria-label": L.t("removeRule"), onclick: function () { li.remove(); renumber(); soon(); } }, "×")),
        L.el("div", { className: "rule-check" }));
      list.appendChild(li);
      renumber();
      if (focus) { input.focus(); }
    }
    function move(li, by) {
      var items = ruleItems(), i = items.indexOf(li), j = i + by;
      if (j < 0 || j >= items.length) { return; }
      if (by < 0) { list.insertBefore(li, items[j]); } else { list.insertBefore(items[j], li); }
      renumber();
      li.querySelector(by < 0 ? ".up" : ".down").focus();
      soon();
    }
    function rules() {
      return ruleItems().map(function (li) {
        return { action: li.querySelector("select").value, pattern: li.querySelector("input").value.trim() };
      }).filter(function (r) { return r.pattern !== ""; });
    }

    // The live rules check, asked 300 ms after the last keystroke; an
    // answer to an older question is dropped.
    function soon() { clearTimeout(timer); timer = setTimeout(check, 300); }
    function check() {
      var q = [];
      lines("seeds").forEach(function (s) { q.push("seed=" + encodeURIComponent(s)); });
      rules().forEach(function (r) { q.push("rule=" + encodeURIComponent(r.action + ":" + r.pattern)); });
      lines("try-urls").forEach(function (u) { q.push("url=" + encodeURIComponent(u)); });
      var n = ++asked;
      L.api("GET", "/api/crawl-rules/check?" + q.join("&")).then(function (r) {
        if (n !== asked) { return; }
        showCheck(r);
      });
    }
    function showCheck(r) {
      var seedsOut = L.clear(L.$("seeds-check")), tryOut = L.clear(L.$("try-check"));
      L.$("rules-error").textContent = "";
      ruleItems().forEach(function (li) { L.clear(li.querySelector(".rule-check")); li.classList.remove("bad"); });
      if (!r.ok) {
        var m = r.body && r.body.message ? String(r.body.message) : L.problem(r);
        var at = /^querystring\/rule\/(\d+)/.exec(m);
        var used = ruleItems().filter(function (li) { return li.querySelector("input").value.trim() !== ""; });
        if (at && used[+at[1]]) {
          used[+at[1]].classList.add("bad");
          used[+at[1]].querySelector(".rule-check").appendChild(L.el("span", { className: "error" }, m));
        } else {
          L.$("rules-error").textContent = m;
        }
        return;
      }
      var ans = r.body;
      (ans.seeds || []).forEach(function (s) {
        var text = !s.valid ? L.t("seedInvalid", { why: s.error || "" }) : s.followed ? L.t("seedFollowed", { site: s.site || "" }) : L.t("seedNotFollowed");
        seedsOut.appendChild(L.el("li", { className: s.valid && s.followed ? "ok" : "error" }, L.el("span", { className: "url" }, s.url), " — ", text));
      });
      var used = ruleItems().filter(function (li) { return li.querySelector("input").value.trim() !== ""; });
      if (used.length === 0 && (ans.rules || []).length > 0) {
        L.$("rules-error").textContent = L.t("defaultRules", { rules: ans.rules.map(function (x) { return x.action + ":" + x.pattern; }).join(", ") });
      } else {
        (ans.rules || []).forEach(function (rr, i) {
          var li = used[i];
          if (!li) { return; }
          var out = li.querySelector(".rule-check");
          if (rr.error) { li.classList.add("bad"); out.appendChild(L.el("span", { className: "error" }, L.t("ruleInvalid", { why: rr.error }))); }
          else if (rr.coveredBy) { li.classList.add("bad"); out.appendChild(L.el("span", { className: "error" }, L.t("ruleShadowed", { n: rr.coveredBy }))); }
          else { out.appendChild(L.el("span", { className: "muted" }, L.t("ruleKind", { kind: rr.kind || "", pattern: rr.pattern }))); }
        });
      }
      (ans.urls || []).forEach(function (u) {
        var text;
        if (u.error) { text = L.t("urlInvalid", { why: u.error }); }
        else if (u.rule > 0) { text = L.t("urlDecided", { n: u.rule, action: L.t("action_" + u.action), pattern: u.pattern || "" }); }
        else { text = L.t("urlNoRule"); }
        tryOut.appendChild(L.el("li", { className: u.error ? "error" : (u.action === "skip" || !u.rule ? "dropped" : "ok"), "data-rule": String(u.rule || 0) },
          L.el("span", { className: "url" }, u.url), " — ", text));
      });
    }

    function clearErrors() {
      Array.prototype.forEach.call(form.querySelectorAll(".error[id]"), function (e) { e.textContent = ""; });
      Array.prototype.forEach.call(form.querySelectorAll("[aria-invalid]"), function (e) { e.removeAttribute("aria-invalid"); });
    }
    function fieldError(field, text) {
      var box = L.$(field + "-error"), input = L.$(field);
      if (!box) { box = L.$("form-error"); }
      box.textContent = text;
      if (input) { input.setAttribute("aria-invalid", "true"); input.focus(); }
    }
    function number(id) {
      var v = L.$(id).value.trim();
      if (v === "") { return undefined; }
      return /^-?\d+$/.test(v) ? parseInt(v, 10) : NaN;
    }

    form.addEventListener("submit", function (e) {
      e.preventDefault();
      clearErrors();
      var body = { seeds: lines("seeds") };
      var rs = rules();
      if (rs.length) { body.rules = rs.map(function (r) { var o = {}; o[r.action] = r.pattern; return o; }); }
      var bad = false;
      ["maxDepth", "perHostDelayMs", "maxPages", "hostParallelism"].forEach(function (f) {
        var n = number(f);
        if (n !== n) { fieldError(f, L.t("mustBeInteger")); bad = true; return; }
        if (n !== undefined) { body[f] = n; }
      });
      if (body.seeds.length === 0) { fieldError("seeds", L.t("needSeed")); bad = true; }
      if (bad) { return; }
      L.$("start").disabled = true;
      L.api("POST", "/api/crawls", body).then(function (r) {
        L.$("start").disabled = false;
        if (r.ok && r.body && r.body.crawlId) { window.location.assign("/crawls/" + encodeURIComponent(r.body.crawlId)); return; }
        showRefusal(r);
      }, function () { L.$("start").disabled = false; L.$("form-error").textContent = L.t("failed", { n: 0 }); });
    });
    function showRefusal(r) {
      var b = r.body || {};
      if (r.status === 400 && typeof b.message === "string") {
        var m = /^body\/(\w+)/.exec(b.message);
        var f = m ? m[1] : "";
        if (f === "rules") { L.$("rules-error").textContent = b.message; L.$("rules-error").scrollIntoView(); return; }
        if (["seeds", "maxDepth", "perHostDelayMs", "maxPages", "hostParallelism"].indexOf(f) >= 0) { fieldError(f, b.message); return; }
        L.$("form-error").textContent = b.message;
        return;
      }
      if (r.status === 400 && Array.isArray(b.rules)) {
        var used = ruleItems().filter(function (li) { return li.querySelector("input").value.trim() !== ""; });
        b.rules.forEach(function (x) {
          var li = used[x.rule - 1];
          var text = x.coveredBy ? L.t("ruleShadowed", { n: x.coveredBy }) : L.t("ruleInvalid", { why: x.reason || "" });
          if (li) { li.classList.add("bad"); L.clear(li.querySelector(".rule-check")).appendChild(L.el("span", { className: "error" }, text)); }
        });
        L.$("rules-error").textContent = String(b.error || "");
        return;
      }
      if (r.status === 400 && Array.isArray(b.seeds)) { fieldError("seeds", L.t("seedsNotFollowed", { seeds: b.seeds.join(" ") })); return; }
      if (r.status === 400 && b.error && /seed/.test(b.error)) { fieldError("seeds", String(b.error)); return; }
      var box = L.clear(L.$("form-error"));
      if (r.status === 409) {
        // The organization runs as many crawls as it may at once (limit);
        // the oldest of them is named when this person may open it.
        var n = typeof b.limit === "number" && b.limit > 0 ? b.limit : 0;
        L.append(box, [n ? L.t("crawlsAtLimit", { n: n }) : L.t("crawlsAtLimitSome")]);
        if (b.crawlId) {
          L.append(box, [" ", L.el("a", { href: "/crawls/" + encodeURIComponent(b.crawlId), id: "oldest-crawl" }, L.t(n === 1 ? "openRunning" : "openOldest"))]);
        }
        return;
      }
      box.textContent = r.status === 404 ? L.t("mayNotStart") : L.problem(r);
    }

    L.$("add-rule").addEventListener("click", function () { addRule("follow", "", true); });
    ["seeds", "try-urls"].forEach(function (id) { L.$(id).addEventListener("input", soon); });
    list.addEventListener("input", soon);
    list.addEventListener("change", soon);
    addRule("follow", "same-origin", false);
    soon();
  });
})();
