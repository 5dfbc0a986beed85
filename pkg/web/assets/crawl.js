// One crawl: its facts, live progress by level and host (short polling of
// GET /api/crawls/{id}/progress while it runs), politeness as a picture
// (an SVG timeline per host built with DOM APIs), the pages table and the
// decisions by rule and host; stop it; replay it as one collection.
(function () {
  "use strict";
  var L = window.L;
  var SVG = "http://www.w3.org/2000/svg";
  var UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

  function duration(ms) {
    if (!(ms >= 0)) { return ""; }
    var s = Math.round(ms / 1000), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    s = s % 60;
    if (h > 0) { return L.t("durHM", { h: h, m: m }); }
    if (m > 0) { return L.t("durMS", { m: m, s: s }); }
    return L.t("durS", { s: s });
  }
  // hostClass keeps a host name of ordinary length on one line
  // ("127.0.0.1:3996" over "7" reads as another host) and lets a long one
  // break anywhere, as a URL does, so that it cannot widen its table.
  function hostClass(h) { return String(h).length <= 40 ? "host" : "url"; }
  function ms(v) { return v === null || v === undefined ? "—" : L.t("msValue", { n: Math.round(v * 10) / 10 }); }
  // searchFact says how far a crawl's archives are searchable: indexed of
  // all, or (once every one is and the crawl has ended) how long after its
  // end the last one was.
  function searchFact(s) {
    if (!(s.archives > 0)) { return L.t("searchNone"); }
    if (!s.searchableAt) { return L.t("searchSome", { indexed: s.indexed, n: s.archives }); }
    if (!(s.searchableAfterMs > 0)) { return L.t("searchAtEnd", { n: s.archives }); }
    return L.t("searchAfter", { n: s.archives, d: s.searchableAfterMs < 1000 ? ms(s.searchableAfterMs) : duration(s.searchableAfterMs) });
  }
  // indexing says an ended crawl's archives are still being indexed.
  function indexing(v) {
    return v.state !== "running" && !!v.search && v.search.archives > 0 && !v.search.searchableAt &&
      !!(L.config.Features && L.config.Features.Search);
  }
  function stateChip(state, reason) {
    var key = reason === "stopped" ? "stopped" : state;
    return L.el("span", { className: "chip state-" + key }, L.t("state_" + key));
  }
  function table(caption, heads, rows, numeric) {
    var thead = L.el("tr", null, heads.map(function (h, i) { return L.el("th", { scope: "col", className: numeric && numeric[i] ? "num" : null }, h); }));
    label(rows, heads);
    return L.el("div", { className: "table-wrap" }, L.el("table", { className: "cards" },
      L.el("caption", { className: "sr-only" }, caption), L.el("thead", null, thead), L.el("tbody", null, rows)));
  }
  // label names each cell by its column, for the narrow layout that shows
  // rows as cards (the label is an attribute, shown by CSS as text).
  function label(rows, heads) {
    rows.forEach(function (r) { Array.prototype.forEach.call(r.cells, function (c, i) { c.setAttribute("data-label", heads[i] || ""); }); });
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs || {}) { if (Object.prototype.hasOwnProperty.call(attrs, k)) { e.setAttribute(k, String(attrs[k])); } }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c !== null && c !== undefined) { e.appendChild(typeof c === "object" ? c : document.createTextNode(String(c))); }
    }
    return e;
  }

  // The politeness picture: one row per host on a shared time axis; each
  // capture a bar from its start to its end, the required delay after it
  // a lighter band, and any gap shorter than the delay (or an overlap)
  // in red.
  function picture(rep) {
    var hosts = rep.hosts || [];
    var t0 = Infinity, t1 = -Infinity;
    hosts.forEach(function (h) {
      (h.timeline || []).forEach(function (c) {
        t0 = Math.min(t0, Date.parse(c.submittedAt));
        t1 = Math.max(t1, Date.parse(c.finishedAt) + (c.delayMs || 0));
      });
    });
    if (!isFinite(t0)) { return null; }
    var W = 800, left = 8, right = 8, rowH = 46, top = 8, axis = 22;
    var span = Math.max(t1 - t0, 1), scale = (W - left - right) / span;
    var x = function (t) { return left + (t - t0) * scale; };
    var H = top + hosts.length * rowH + axis;
    var id = "politeness-title";
    var root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-labelledby": id + " politeness-summary", "class": "timeline", preserveAspectRatio: "xMinYMin meet" },
      svg("title", { id: id }, L.t("pictureTitle")));
    hosts.forEach(function (h, i) {
      var y = top + i * rowH;
      var g = svg("g", { "class": "row", "data-host": h.host, transform: "translate(0," + y + ")" });
      g.appendChild(svg("text", { x: left, y: 12, "class": "host" }, h.host));
      g.appendChild(svg("line", { x1: left, x2: W - right, y1: 30, y2: 30, "class": "base" }));
      var tl = h.timeline || [];
      tl.forEach(function (c, j) {
        var s = Date.parse(c.submittedAt), f = Date.parse(c.finishedAt);
        var bad = c.overlap || c.short;
        if (bad && j > 0) {
          // The part of the gap the delay required and did not get.
          var prevEnd = -Infinity;
          for (var k = 0; k < j; k++) { prevEnd = Math.max(prevEnd, Date.parse(tl[k].finishedAt)); }
          var from = Math.min(s, prevEnd), to = prevEnd + (c.delayMs || 0);
          g.appendChild(svg("rect", { x: x(from), y: 18, width: Math.max(x(to) - x(from), 2), height: 24, "class": "bad" + (c.overlap ? " overlap" : " short") },
            svg("title", null, L.t(c.overlap ? "markOverlap" : "markShort", { url: c.url, gap: ms(c.gapMs), delay: ms(c.delayMs) }))));
        }
        if (c.delayMs > 0) {
          g.appendChild(svg("rect", { x: x(f), y: 24, width: Math.max(c.delayMs * scale, 1), height: 12, "class": "delay" },
            svg("title", null, L.t("markDelay", { delay: ms(c.delayMs) }))));
        }
        g.appendChild(svg("rect", { x: x(s), y: 20, width: Math.max((f - s) * scale, 2), height: 20, "class": "capture state-" + c.state + (bad ? " late" : "") },
          svg("title", null, L.t("markCapture", { url: c.url, from: L.when(c.submittedAt), took: ms(f - s) }))));
      });
      root.appendChild(g);
    });
    var ay = top + hosts.length * rowH + 14;
    root.appendChild(svg("text", { x: left, y: ay, "class": "axis" }, L.t("durSec", { s: 0 })));
    root.appendChild(svg("text", { x: W - right, y: ay, "class": "axis", "text-anchor": "end" }, L.t("durSec", { s: Math.round(span / 100) / 10 })));
    return root;
  }
  function summary(rep) {
    var items = (rep.hosts || []).map(function (h) {
      var clean = h.overlaps === 0 && h.shortGaps === 0;
      return L.el("li", { className: clean ? "ok" : "error" },
        L.el("strong", null, h.host), " — ",
        L.t("hostSummary", { captures: L.t("nCaptures", { n: h.captures }), gaps: L.t("nGaps", { n: h.gaps }), min: ms(h.minGapMs), median: ms(h.medianGapMs), delay: ms(h.delayMs), source: L.t("source_" + h.delaySource) }),
        " ", clean ? L.t("hostClean") : L.t("hostBad", { overlaps: h.overlaps, short: h.shortGaps }),
        h.robots ? " " + L.t("robots_" + h.robots.outcome, { n: h.robots.skipped }) : "",
        h.backoff ? " " + L.t("backoff", { n: h.backoff.count, max: ms(h.backoff.maxMs) }) : "",
        h.timelineCut ? " " + L.t("timelineCut") : "");
    });
    return L.el("ul", { id: "politeness-summary", className: "summary" }, items);
  }

  function decidedBy(p) {
    var d = p.decidedBy || {};
    if (d.kind === "seed") { return L.t("bySeed"); }
    if (d.kind === "robots") { return L.t("byRobots"); }
    if (d.rule > 0) { return L.t("byRule", { n: d.rule, action: L.t("action_" + d.action), pattern: d.pattern || "" }); }
    return L.t("byNoRule");
  }

  L.screen("crawl", function () {
    var id = L.$("crawl").getAttribute("data-id") || "";
    var status = L.$("crawl-status");
    if (!UUID.test(id)) { status.textContent = L.t("gone"); return; }
    var base = "/api/crawls/" + id;
    var view = null, timer = null, lastKey = "", pagesNext = null, canStop = false, endedAt = 0;

    function facts(v) {
      var dl = L.clear(L.$("crawl-facts"));
      var end = v.finishedAt ? new Date(v.finishedAt) : new Date();
      function fact(k, val) { dl.appendChild(L.el("div", null, L.el("dt", null, L.t(k)), L.el("dd", null, val))); }
      fact("colState", [stateChip(v.state, v.stopReason), v.stopReason && v.stopReason !== "stopped" ? " " + L.t("stop_" + v.stopReason) : ""]);
      fact("colSeeds", L.el("ul", { className: "plain" }, v.seeds.map(function (s) { return L.el("li", { className: "url" }, s); })));
      fact("colOrg", v.orgId);
      fact("colBy", v.requestedBy);
      fact("colStarted", L.time(v.startedAt));
      if (v.finishedAt) { fact("colFinished", L.time(v.finishedAt)); }
      fact("colDuration", duration(end - new Date(v.startedAt)));
      fact("colLimits", L.t("limits", { depth: v.maxDepth, pages: L.t("nPages", { n: v.maxPages }), delay: v.perHostDelayMs, hosts: L.t("nHosts", { n: v.hostParallelism }) }));
      fact("colRules", L.el("ol", { className: "plain-ol" }, (v.rules || []).map(function (r) {
        var k = Object.keys(r)[0];
        return L.el("li", null, L.t("action_" + k) + " ", L.el("code", null, String(r[k])));
      })));
      if (v.error) { fact("colError", L.el("span", { className: "error" }, v.error)); }
      if (v.search && L.config.Features && L.config.Features.Search) { fact("colSearch", L.el("span", { id: "crawl-search" }, searchFact(v.search))); }
      L.$("stop").hidden = !(v.state === "running" && canStop);
      L.$("replay").hidden = !(L.config.Features && L.config.Features.Replay) || v.pagesCaptured === 0;
      L.$("download").hidden = L.$("replay").hidden;
      L.$("crawl-head").hidden = false;
    }

    // A crawl that ended leaves its pending pages uncaptured for good:
    // they read "not captured", not "pending".
    function ended() { return !!view && view.state !== "running"; }
    function pendingHead() { return L.t(ended() ? "colUnreached" : "colPending"); }

    function progress(p) {
      var lv = L.clear(L.$("levels"));
      lv.appendChild(table(L.t("levelsCaption"), [L.t("colDepth"), L.t("colCaptured"), L.t("colFailed"), L.t("colSkipped"), pendingHead()],
        (p.levels || []).map(function (l) {
          return L.el("tr", { "data-depth": String(l.depth) }, L.el("th", { scope: "row" }, String(l.depth)),
            L.el("td", { className: "num" }, String(l.captured)), L.el("td", { className: "num" }, String(l.failed)),
            L.el("td", { className: "num" }, String(l.skipped)), L.el("td", { className: "num" }, String(l.pending)));
        }), [false, true, true, true, true]));
      var hs = L.clear(L.$("hosts"));
      if ((p.hosts || []).length) {
        hs.appendChild(L.el("h3", null, L.t("hostsTitle")));
        hs.appendChild(table(L.t("hostsCaption"), [L.t("colHost"), L.t("colCaptured"), L.t("colFailed"), L.t("colSkipped"), pendingHead(), L.t("colDelay")],
          p.hosts.map(function (h) {
            return L.el("tr", { "data-host": h.host }, L.el("th", { scope: "row", className: hostClass(h.host) }, h.host),
              L.el("td", { className: "num" }, String(h.captured)), L.el("td", { className: "num" }, String(h.failed)),
              L.el("td", { className: "num" }, String(h.skipped)), L.el("td", { className: "num" }, String(h.pending)),
              L.el("td", null, h.delayMs === null || h.delayMs === undefined ? "—" : (h.delaySource ? L.t("delayFrom", { delay: ms(h.delayMs), source: L.t("source_" + h.delaySource) }) : ms(h.delayMs))));
          }), [false, true, true, true, true, false]));
      }
      if ((p.failures || []).length) {
        hs.appendChild(L.el("h3", null, L.t("failuresTitle")));
        hs.appendChild(L.el("ul", { className: "summary" }, p.failures.map(function (f) { return L.el("li", null, L.t("failureRow", { n: f.pages }), " ", L.el("span", { className: "reason" }, f.reason)); })));
      }
    }

    function pageRows(list) {
      return list.map(function (p) {
        var link = p.archiveId ? L.el("a", { href: "/archives/" + encodeURIComponent(p.archiveId) }, L.t("openArchive")) : "—";
        return L.el("tr", { "data-state": p.state },
          L.el("td", { className: "url" }, p.url),
          L.el("td", { className: "num" }, String(p.depth)),
          L.el("td", null, p.state === "pending" && ended() ?
            L.el("span", { className: "chip page-unreached", title: L.t("unreachedTitle") }, L.t("page_unreached")) :
            L.el("span", { className: "chip page-" + p.state }, L.t("page_" + p.state))),
          L.el("td", null, decidedBy(p), p.reason && p.reason !== "robots" ? L.el("div", { className: "reason" }, p.reason) : null),
          L.el("td", null, link));
      });
    }
    function pages(append) {
      var state = L.$("pages-state").value;
      // An ended crawl's pending pages read "not captured", in the filter too.
      L.$("pages-state").querySelector("option[value='pending']").textContent = L.t(ended() ? "page_unreached" : "page_pending");
      var params = [];
      if (state) { params.push("state=" + encodeURIComponent(state)); }
      if (append && pagesNext !== null) { params.push("after=" + encodeURIComponent(pagesNext)); }
      var q = base + "/pages" + (params.length ? "?" + params.join("&") : "");
      return L.api("GET", q).then(function (r) {
        var box = L.$("pages");
        if (state !== L.$("pages-state").value) { return; }
        if (!r.ok) { L.clear(box).appendChild(L.el("p", { className: "error" }, L.problem(r))); return; }
        var rows = pageRows(r.body.pages || []);
        var body = box.querySelector("tbody");
        if (!append && rows.length === 0) {
          L.clear(box).appendChild(L.el("p", { className: "muted", id: "pages-none" }, L.t("pagesNone")));
        } else if (!append || !body) {
          L.clear(box).appendChild(table(L.t("pagesCaption"), [L.t("colURL"), L.t("colDepth"), L.t("colStatus"), L.t("colDecidedBy"), L.t("colArchive")], rows, [false, true, false, false, false]));
        } else {
          label(rows, [L.t("colURL"), L.t("colDepth"), L.t("colStatus"), L.t("colDecidedBy"), L.t("colArchive")]);
          L.append(body, rows);
        }
        pagesNext = r.body.next === null || r.body.next === undefined ? null : r.body.next;
        L.$("pages-more").hidden = pagesNext === null;
      });
    }
    function decisions() {
      return L.api("GET", base + "/decisions").then(function (r) {
        var box = L.clear(L.$("decisions"));
        if (!r.ok) { box.appendChild(L.el("p", { className: "error" }, L.problem(r))); return; }
        var d = r.body, rs = d.rules || [];
        // Counts by rule and host over every level.
        var by = {}, order = [];
        (d.decisions || []).forEach(function (x) {
          var k = x.rule + "\u0000" + x.hostname;
          if (!by[k]) { by[k] = { rule: x.rule, action: x.action, hostname: x.hostname, links: 0, samples: [] }; order.push(k); }
          by[k].links += x.links;
          (x.samples || []).forEach(function (s) { if (by[k].samples.length < 3) { by[k].samples.push(s); } });
        });
        if (!order.length && !(d.robots || []).length) { box.appendChild(L.el("p", { className: "muted" }, L.t("noDecisions"))); return; }
        if (order.length) {
          box.appendChild(table(L.t("decisionsCaption"), [L.t("colRule"), L.t("colHost"), L.t("colLinks"), L.t("colSamples")],
            order.map(function (k) {
              var x = by[k], r0 = rs[x.rule - 1], pattern = r0 ? String(r0[Object.keys(r0)[0]]) : "";
              return L.el("tr", null,
                L.el("td", null, x.rule > 0 ? L.t("byRule", { n: x.rule, action: L.t("action_" + x.action), pattern: pattern }) : L.t("byNoRule")),
                L.el("td", { className: hostClass(x.hostname) }, x.hostname), L.el("td", { className: "num" }, String(x.links)),
                L.el("td", null, L.el("ul", { className: "plain" }, x.samples.map(function (s) { return L.el("li", { className: "url" }, s); }))));
            }), [false, false, true, false]));
        }
        if ((d.robots || []).length) {
          box.appendChild(L.el("h3", null, L.t("robotsTitle")));
          box.appendChild(table(L.t("robotsTitle"), [L.t("colHost"), L.t("colPages"), L.t("colSamples")],
            d.robots.map(function (x) {
              return L.el("tr", null, L.el("td", { className: hostClass(x.hostname) }, x.hostname), L.el("td", { className: "num" }, String(x.pages)),
                L.el("td", null, L.el("ul", { className: "plain" }, (x.samples || []).map(function (s) { return L.el("li", { className: "url" }, s); }))));
            }), [false, true, false]));
        }
      });
    }
    function politeness() {
      return L.api("GET", base + "/politeness").then(function (r) {
        var box = L.clear(L.$("politeness"));
        if (!r.ok) { box.appendChild(L.el("p", { className: "error" }, L.problem(r))); return; }
        var rep = r.body;
        box.appendChild(L.el("p", { className: rep.ok ? "ok verdict" : "error verdict", id: "politeness-verdict" }, rep.ok ? L.t("politeOK") : L.t("politeBad")));
        var pic = picture(rep);
        if (pic) { box.appendChild(L.el("div", { className: "timeline-wrap" }, pic)); }
        else { box.appendChild(L.el("p", { className: "muted" }, L.t("noCaptures"))); }
        box.appendChild(summary(rep));
        box.appendChild(L.el("p", { className: "legend muted", "aria-hidden": "true" },
          L.el("span", { className: "key capture" }), L.t("legendCapture"), " ",
          L.el("span", { className: "key delay" }), L.t("legendDelay"), " ",
          L.el("span", { className: "key bad" }), L.t("legendBad")));
      });
    }

    function tick() {
      clearTimeout(timer);
      return Promise.all([L.api("GET", base), L.api("GET", base + "/progress")]).then(function (rs) {
        var r = rs[0], p = rs[1];
        if (!r.ok) { status.textContent = L.problem(r); L.$("crawl-head").hidden = true; return; }
        view = r.body;
        facts(view);
        if (p.ok) { progress(p.body); }
        var running = view.state === "running";
        status.textContent = running ? L.t("liveRunning") : L.t("liveEnded", { state: L.t("state_" + (view.stopReason === "stopped" ? "stopped" : view.state)) });
        // What changed since the last look decides what is asked again.
        var key = [view.state, view.pagesCaptured, view.pagesDiscovered, JSON.stringify(p.ok ? p.body.levels : null), JSON.stringify(p.ok ? p.body.hosts : null)].join("|");
        var work = [];
        if (key !== lastKey) { lastKey = key; work.push(pages(false), decisions(), politeness()); }
        return Promise.all(work).then(function () {
          document.body.setAttribute("data-crawl-state", view.state);
          if (running) { timer = setTimeout(tick, 1000); endedAt = 0; return; }
          // Ended: the facts are looked at again while its archives are
          // being indexed (for at most five minutes of this page).
          if (!endedAt) { endedAt = Date.now(); }
          if (indexing(view) && Date.now() - endedAt < 5 * 60 * 1000) { timer = setTimeout(tick, 2000); }
        });
      });
    }

    function may() {
      return L.whoami().then(function (r) {
        canStop = !!(r.ok && r.body && r.body.canSubmit);
        if (view) { L.$("stop").hidden = !(view.state === "running" && canStop); }
      });
    }

    L.$("stop").addEventListener("click", function () {
      var b = L.$("stop");
      b.disabled = true;
      L.api("POST", base + "/stop", {}).then(function (r) {
        b.disabled = false;
        var note = L.$("action-note");
        note.textContent = r.ok ? (r.body.stopped ? L.t("stopped") : L.t("alreadyEnded")) : (r.status === 404 ? L.t("mayNotStop") : L.problem(r));
        tick();
      });
    });
    L.$("replay").addEventListener("click", function () {
      var note = L.clear(L.$("action-note"));
      L.api("POST", base + "/replay", {}).then(function (r) {
        if (!r.ok || !r.body || !/^https?:\/\//.test(r.body.url || "")) { note.textContent = L.problem(r); return; }
        // A link the person opens: a new tab without opener or referrer.
        note.appendChild(L.el("a", { href: r.body.url, target: "_blank", rel: "noopener noreferrer", id: "replay-open" }, L.t("openReplay")));
        note.appendChild(L.el("span", { className: "muted" }, " " + L.t("replayExpires", { at: L.when(r.body.expiresAt) })));
        var limit = L.replayLimit(r.body);
        if (limit) { note.appendChild(L.el("span", { id: "replay-limit" }, " " + limit)); }
        L.$("replay-open").focus();
      });
    });
    // Download: a short-lived link to this origin's merge of the crawl's
    // archives; the file is written as it is merged.
    L.$("download").addEventListener("click", function () {
      // A running crawl's file holds what it has captured so far.
      L.download(base + "/download", L.$("action-note"), L.t(ended() ? "crawlDownloading" : "crawlDownloadingRunning"), L.crawlDownloadBusy);
    });
    L.$("pages-more").addEventListener("click", function () { pages(true); });
    L.$("pages-state").addEventListener("change", function () { pagesNext = null; pages(false); });
    L.$("pages-filter").addEventListener("submit", function (e) { e.preventDefault(); });

    // Why a URL was captured or not: the crawl's verdict in words, with
    // what decided it; every string from the API is text.
    function whySentence(w) {
      var p = w.page || { decidedBy: w.rules };
      // How the crawl ended, for a sentence's parentheses: "stopped", or
      // its state and why ("succeeded, depth limit reached").
      var how = L.t("state_" + (w.stopReason === "stopped" ? "stopped" : w.state));
      if (w.stopReason && w.stopReason !== "stopped" && Object.prototype.hasOwnProperty.call(L.text, "stop_" + w.stopReason)) {
        how += L.t("listSep") + L.t("stop_" + w.stopReason).replace(/^[(（]|[)）]$/g, "");
      }
      var v = { url: w.url, by: decidedBy(p), depth: p.depth, state: how, from: p.url, reason: p.reason || "", pages: w.maxPages };
      switch (w.verdict) {
        case "captured": return L.t(p.url !== w.url ? "whyRedirected" : "whyCaptured", v);
        case "failed": return L.t("whyFailed", v);
        case "skipped": return L.t("whySkipped", v);
        case "pending": return L.t("whyPending", v);
        case "notCaptured": return L.t("whyNotCaptured", v);
        case "ruledOut":
          return w.rules && w.rules.rule > 0 ?
            L.t("whyRuledOut", { url: w.url, n: w.rules.rule, action: L.t("action_" + w.rules.action), pattern: w.rules.pattern || "" }) : L.t("whyNoRule", v);
      }
      v.depth = w.maxDepth;
      return L.t(w.state === "running" ? "whyNotYetReached" : "whyNotReached", v);
    }
    L.$("why-form").addEventListener("submit", function (e) {
      e.preventDefault();
      var u = L.$("why-url").value.trim();
      if (!u) { L.$("why-url").focus(); return; }
      L.api("GET", base + "/why?url=" + encodeURIComponent(u)).then(function (r) {
        // Nothing of the answer before stays: its verdict, tooltip, text.
        var out = L.clear(L.$("why-answer"));
        out.className = "";
        out.removeAttribute("title");
        out.removeAttribute("data-verdict");
        // A URL the API refuses (400 querystring/url) is the person's to
        // retype: said in their language, the API's reason as a tooltip.
        if (r.status === 400) { out.className = "error"; out.textContent = L.t("whyBadURL"); out.title = L.problem(r); L.$("why-url").focus(); return; }
        if (!r.ok) { out.className = "error"; out.textContent = L.problem(r); return; }
        var w = r.body;
        out.className = "verdict-" + w.verdict;
        out.setAttribute("data-verdict", w.verdict);
        out.appendChild(document.createTextNode(whySentence(w)));
        if (w.verdict === "captured" && w.page && w.page.archiveId) {
          L.append(out, [" ", L.el("a", { href: "/archives/" + encodeURIComponent(w.page.archiveId), id: "why-archive" }, L.t("whyArchive"))]);
        }
      });
    });
    document.addEventListener("identity", function () { lastKey = ""; may().then(tick); });
    may().then(tick);
  });
})();
