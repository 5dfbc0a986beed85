// The search screen: /api/search with the archives list's filters, kept
// in the page's address; hits grouped by archive; matches highlighted.
// The API's highlights are HTML-escaped text with the matches between
// <mark> and </mark>: they are split on those two tags, each piece
// un-escaped once and put in as a text node (inside a <mark> element made
// here when it matched). The server's text is never parsed as markup.
L.screen("search", function () {
  "use strict";
  var form = L.$("find"), hits = L.$("hits"), more = L.$("hits-more"), found = L.$("found");
  if (!form) { return; }
  var fields = ["q", "host", "crawl", "from", "to"];
  var inputs = { q: L.$("q"), host: L.$("f-host"), crawl: L.$("f-crawl"), from: L.$("f-from"), to: L.$("f-to") };
  var filters = {}, cursor = null, generation = 0, searching = false, counted = "", groups = {};

  function fromAddress() {
    var p = new URLSearchParams(window.location.search), f = {};
    fields.forEach(function (k) { f[k] = (p.get(k) || "").trim(); });
    return f;
  }
  function toForm(f) { fields.forEach(function (k) { inputs[k].value = f[k]; }); }
  function fromForm() { var f = {}; fields.forEach(function (k) { f[k] = inputs[k].value.trim(); }); return f; }
  function address(f) {
    var p = new URLSearchParams();
    fields.forEach(function (k) { if (f[k]) { p.set(k, f[k]); } });
    var s = p.toString();
    return window.location.pathname + (s ? "?" + s : "");
  }

  // unescape undoes the API's HTML escaping of one piece of a snippet
  // (Go's html.EscapeString writes &lt; &gt; &amp; &#39; &#34;; the other
  // usual forms are read too). One pass, so "&amp;lt;" stays "&lt;".
  function unescape(s) {
    var named = { lt: "<", gt: ">", amp: "&", quot: "\"", apos: "'" };
    return s.replace(/&(lt|gt|amp|quot|apos|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});/g, function (m, e) {
      if (e.charAt(0) !== "#") { return named[e]; }
      var n = /^#[xX]/.test(e) ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return n > 0 && n <= 0x10ffff && (n < 0xd800 || n > 0xdfff) ? String.fromCodePoint(n) : "\ufffd";
    });
  }
  // marked fills el from one highlighted string of the API.
  function marked(el, s) {
    var inside = false;
    String(s).split(/(<mark>|<\/mark>)/).forEach(function (p) {
      if (p === "<mark>") { inside = true; return; }
      if (p === "</mark>") { inside = false; return; }
      if (p === "") { return; }
      var t = document.createTextNode(unescape(p));
      if (!inside) { el.appendChild(t); return; }
      var m = document.createElement("mark"); m.appendChild(t); el.appendChild(m);
    });
    return el;
  }

  // The highlight reader, for tests that feed it what the API could send.
  L.highlight = function (s) { return marked(L.el("p"), s); };


  // others is the hit's other captures of its URL (the API lists those the
  // caller may view, newest first): a disclosure whose summary counts them
  // and whose list links each to its archive's page, by capture time.
  function others(h) {
    var o = Array.isArray(h.otherCaptures) ? h.otherCaptures : [];
    if (!o.length) { return null; }
    var key = h.otherCapturesMore === true ? "otherCapturesMore" : "otherCaptures";
    return L.el("details", { className: "others muted" },
      L.el("summary", null, L.t(key, { n: o.length })),
      L.el("ul", { className: "others-list" }, o.map(function (c) {
        return L.el("li", null, L.el("a", { href: "/archives/" + encodeURIComponent(c.archiveId), "data-archive": c.archiveId }, L.time(c.capturedAt)));
      })));
  }

  // hit is one matching page: its title (highlighted, the URL when it has
  // none), its URL, the snippets, and "open" at that page (the viewer opens
  // at the page that matched, not the archive's first).
  function hit(h) {
    var note = L.el("span", { className: "note", "aria-live": "polite" });
    var title = L.el("a", { href: "/archives/" + encodeURIComponent(h.archiveId), className: "name" });
    if (h.titleHighlight) { marked(title, h.titleHighlight); } else { title.textContent = h.title || h.url; }
    var li = L.el("li", { className: "hit", "data-archive": h.archiveId },
      L.el("h3", { className: "title" }, title),
      L.el("div", { className: "url" }, h.url));
    (h.highlight || []).forEach(function (f) { li.appendChild(marked(L.el("p", { className: "snippet" }), f)); });
    if (h.textWithheld) { li.appendChild(L.el("p", { className: "snippet muted" }, L.t("withheld", { reason: h.textWithheld }))); }
    L.append(li, others(h));
    li.appendChild(L.el("div", { className: "actions" },
      L.el("button", { type: "button", className: "open primary", title: L.t("openHint"),
        onclick: function () { L.replay("/api/archives/" + encodeURIComponent(h.archiveId) + "/replay", { page: h.url }, note); } }, L.t("open")),
      note));
    return li;
  }
  // group is the list of one archive's hits, made when its first hit
  // arrives: headed by when it was captured and its labels.
  function group(h) {
    if (!groups[h.archiveId]) {
      var list = L.el("ul", { className: "rows" });
      hits.appendChild(L.el("section", { className: "archive-group", "data-archive": h.archiveId },
        L.el("div", { className: "meta" }, L.time(h.capturedAt),
          (h.labels || []).map(function (l) { return L.el("span", { className: "chip" }, l); }),
          L.el("a", { href: "/archives/" + encodeURIComponent(h.archiveId), className: "details" }, L.t("details"))),
        list));
      groups[h.archiveId] = list;
    }
    return groups[h.archiveId];
  }

  function search(reset) {
    if (reset) {
      generation++; L.clear(hits); cursor = null; more.hidden = true; searching = false; more.disabled = false; counted = ""; groups = {};
      if (filters.q === "") { found.textContent = L.t("searchEmpty"); return; }
    } else if (searching) {
      return;
    }
    var mine = generation, first = !cursor;
    if ((L.who === "names" || L.who === "token") && !L.identity()) { found.textContent = L.t("unauthorized"); return; }
    var p = new URLSearchParams();
    fields.forEach(function (k) { if (filters[k]) { p.set(k, filters[k]); } });
    if (cursor) { p.set("cursor", cursor); }
    found.textContent = L.t("searching");
    searching = true; more.disabled = true;
    L.api("GET", "/api/search?" + p.toString()).then(function (r) {
      if (mine !== generation) { return; }
      if (!r.ok) {
        more.hidden = !((r.status === 503 || r.status === 429) && cursor);
        if (r.status === 404) { found.textContent = L.t("searchOff"); }
        else if (r.status === 400) { found.textContent = L.t("searchBad", { reason: r.body && typeof r.body.message === "string" ? r.body.message : "" }); }
        else if (r.status === 401 || r.status === 503 || r.status === 429) { found.textContent = L.problem(r); }
        else { found.textContent = L.t("searchFailed", { n: r.status }); }
        return;
      }
      var body = r.body || {};
      (body.hits || []).forEach(function (h) { group(h).appendChild(hit(h)); });
      cursor = body.next || null;
      more.hidden = !cursor;
      var shown = hits.querySelectorAll("li.hit").length;
      if (body.truncated) {
        found.textContent = L.t("searchTruncated");
      } else if (shown === 0) {
        found.textContent = L.t("noHits");
      } else {
        // Only the first page has a total; later pages keep its line.
        if (first) {
          var atLeast = body.totalIsLowerBound === true || body.totalExact === false;
          counted = typeof body.total === "number" ? L.t(atLeast ? "hitsAtLeast" : "hitsExact", { n: body.total }) : "";
        }
        found.textContent = counted;
      }
    }).catch(function () {
      if (mine === generation) { found.textContent = L.t("searchFailed", { n: 0 }); }
    }).then(function () { if (mine === generation) { searching = false; more.disabled = false; } });
  }

  function apply(f) { filters = f; toForm(f); search(true); }
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var f = fromForm();
    var to = address(f);
    if (to !== window.location.pathname + window.location.search) { window.history.pushState(null, "", to); }
    apply(f);
  });
  more.addEventListener("click", function () { search(false); });
  window.addEventListener("popstate", function () { apply(fromAddress()); });
  document.addEventListener("identity", function () { apply(fromAddress()); });
  var start = fromAddress();
  if (start.q) { apply(start); } else { toForm(start); }
});
