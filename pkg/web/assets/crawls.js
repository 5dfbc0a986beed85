// The crawls list: the caller's organizations' crawls, newest first, from
// GET /api/crawls; refreshed while one of them runs.
(function () {
  "use strict";
  var L = window.L;

  // duration(ms): "1 h 2 min", "3 min 4 s", "5 s" in the page's language.
  function duration(ms) {
    if (!(ms >= 0)) { return ""; }
    var s = Math.round(ms / 1000), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    s = s % 60;
    if (h > 0) { return L.t("durHM", { h: h, m: m }); }
    if (m > 0) { return L.t("durMS", { m: m, s: s }); }
    return L.t("durS", { s: s });
  }
  function stateChip(state, reason) {
    var label = L.t("state_" + state);
    if (reason === "stopped") { label = L.t("state_stopped"); }
    return L.el("span", { className: "chip state-" + (reason === "stopped" ? "stopped" : state) }, label);
  }

  L.screen("crawls", function () {
    var body = L.$("crawls-body"), table = L.$("crawls-table"), status = L.$("crawls-status"), more = L.$("crawls-more");
    var next = null, timer = null;

    function row(c) {
      var end = c.finishedAt ? new Date(c.finishedAt) : new Date();
      var seeds = c.seeds || [];
      var link = L.el("a", { href: "/crawls/" + encodeURIComponent(c.crawlId), className: "url" }, seeds[0] || c.crawlId);
      return L.el("tr", { "data-crawl": c.crawlId },
        L.el("td", null, L.time(c.startedAt)),
        L.el("td", null, link, seeds.length > 1 ? L.el("span", { className: "muted" }, " " + L.t("moreSeeds", { n: seeds.length - 1 })) : null,
          L.el("div", { className: "muted small" }, c.orgId)),
        L.el("td", null, stateChip(c.state, c.stopReason)),
        L.el("td", { className: "num" }, String(c.pagesCaptured)),
        L.el("td", { className: "num" }, String(c.pagesFailed || 0)),
        L.el("td", { className: "num" }, String(c.pagesSkipped || 0)),
        L.el("td", null, c.requestedBy),
        L.el("td", null, duration(end - new Date(c.startedAt))));
    }

    function load(append) {
      var q = "/api/crawls";
      if (append && next) { q += "?before=" + encodeURIComponent(next.before) + "&beforeId=" + encodeURIComponent(next.beforeId); }
      return L.api("GET", q).then(function (r) {
        if (!r.ok) { status.textContent = L.problem(r); table.hidden = true; more.hidden = true; return; }
        if (!append) { L.clear(body); }
        var list = r.body.crawls || [];
        var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (h) { return h.textContent; });
        list.forEach(function (c) {
          var tr = row(c);
          Array.prototype.forEach.call(tr.cells, function (td, i) { td.setAttribute("data-label", heads[i] || ""); });
          body.appendChild(tr);
        });
        next = r.body.next || null;
        more.hidden = !next;
        var rows = body.querySelectorAll("tr").length;
        table.hidden = rows === 0;
        status.textContent = rows === 0 ? L.t("noCrawls") : L.t("crawlsShown", { n: rows });
        var running = list.some(function (c) { return c.state === "running"; });
        clearTimeout(timer);
        if (running && !append) { timer = setTimeout(function () { load(false); }, 3000); }
      });
    }
    function may() {
      L.whoami().then(function (r) { L.$("crawls-actions").hidden = !(r.ok && r.body && r.body.canSubmit); });
    }
    more.addEventListener("click", function () { load(true); });
    document.addEventListener("identity", function () { load(false); may(); });
    load(false);
    may();
  });
})();
