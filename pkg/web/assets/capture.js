// The capture form: POST /api/captures runs the capture on the server and
// answers when it is done; meanwhile the page shows how long it has taken.
// Then the new archive, or why there is none.
L.screen("capture", function () {
  "use strict";
  var form = L.$("capture-form"), status = L.$("capture-status"), result = L.$("capture-result");
  var engineSel = L.$("capture-engine"), orgSel = L.$("capture-org"), go = L.$("capture-go");
  var progress = L.$("capture-progress");

  function say(text, bad) { status.textContent = text || ""; status.className = bad ? "error" : ""; }

  function load() {
    if (!L.identity() && L.who !== "none") { say(L.t("unauthorized")); return; }
    L.api("GET", "/api/captures/engines").then(function (r) {
      if (!r.ok) { say(L.problem(r), true); return; }
      L.clear(engineSel);
      var names = r.body.engines.slice().sort(function (a, b) { return (a === r.body["default"] ? -1 : 0) - (b === r.body["default"] ? -1 : 0); });
      names.forEach(function (n) {
        var label = L.t("engine_" + n);
        if (n === r.body["default"]) { label = L.t("engineDefault", { name: label }); }
        L.append(engineSel, L.el("option", { value: n }, label));
      });
    });
    L.whoami().then(function (r) {
      if (!r.ok) { say(L.problem(r), true); return; }
      L.clear(orgSel);
      (r.body.organizations || []).forEach(function (o) { L.append(orgSel, L.el("option", { value: o }, o)); });
      if (!(r.body.organizations || []).length) { say(L.t("captureNoOrg"), true); go.disabled = true; return; }
      if (!r.body.canSubmit) { say(L.t("captureNotAllowed"), true); }
      go.disabled = false;
    });
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var url = L.$("capture-url").value.trim(), engine = engineSel.value;
    var started = Date.now();
    L.clear(result);
    go.disabled = true;
    progress.hidden = false;
    function tick() {
      say(L.t("captureWorking", { url: url, engine: engine, s: Math.floor((Date.now() - started) / 1000) }));
    }
    tick();
    var timer = setInterval(tick, 250);
    L.append(result, L.el("p", { className: "muted", id: "capture-wait" }, L.t("captureWaiting")));
    var body = { urls: [url], organization: orgSel.value };
    if (engine) { body.engine = engine; }
    L.api("POST", "/api/captures", body).then(function (r) {
      clearInterval(timer);
      go.disabled = false;
      progress.hidden = true;
      L.clear(result);
      var secs = ((Date.now() - started) / 1000).toFixed(1);
      if (!r.ok) { say(L.problem(r), true); return; }
      var page = (r.body.pages || [])[0] || {};
      if (page.status !== "captured") { say(L.t("captureFailed", { reason: page.error || page.status }), true); return; }
      say(L.t("captureDone", { s: secs }));
      L.append(result, L.el("p", null,
        L.el("a", { href: "/archives/" + encodeURIComponent(page.archiveId), id: "capture-archive" }, L.t("captureOpen")),
        " ", L.el("span", { className: "url" }, page.url)));
    }).catch(function (err) {
      clearInterval(timer); go.disabled = false; progress.hidden = true;
      say(String(err), true);
    });
  });

  document.addEventListener("identity", load);
  load();
});
