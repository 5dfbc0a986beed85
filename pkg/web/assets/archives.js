// The archives screen (the console's home): the archives the caller may
// view, filtered by what the page's address says, grouped by crawl when
// asked, paged with the API's cursor without ever showing a row twice.
// Every value from the API goes in as text (L.el, textContent); archived
// titles and URLs are outside input.
L.screen("archives", function () {
  "use strict";
  var rows = L.$("rows"), more = L.$("more"), status = L.$("status"), form = L.$("filters");
  if (!rows) { return; }
  var fields = ["q", "host", "crawl", "from", "to"];
  var cursor = null, generation = 0, busy = false, seen = {}, groups = {}, pages = 0, filters = {};

  // The filters are the page's address: ?q=&host=&crawl=&from=&to=&group=crawl.
  // Applying them pushes a new address (shareable; Back returns to the
  // previous filters).
  function fromAddress() {
    var p = new URLSearchParams(window.location.search), f = {};
    fields.forEach(function (k) { f[k] = (p.get(k) || "").trim(); });
    f.group = p.get("group") === "crawl";
    return f;
  }
  function toForm(f) {
    fields.forEach(function (k) { L.$("f-" + k).value = f[k]; });
    L.$("f-group").checked = f.group;
  }
  function fromForm() {
    var f = {};
    fields.forEach(function (k) { f[k] = L.$("f-" + k).value.trim(); });
    f.group = L.$("f-group").checked;
    return f;
  }
  function address(f) {
    var p = new URLSearchParams();
    fields.forEach(function (k) { if (f[k]) { p.set(k, f[k]); } });
    if (f.group) { p.set("group", "crawl"); }
    var s = p.toString();
    return window.location.pathname + (s ? "?" + s : "");
  }
  function filtered() { return fields.some(function (k) { return filters[k] !== ""; }); }

  // reason says one confirmed reason the caller sees a row (the API's
  // "why"): an organization, ownership, or a share and its end.
  function reason(r) {
    if (r.kind === "organization") { return L.t("whyOrganization", { org: r.organization }); }
    if (r.kind === "owner") { return L.t("whyOwner"); }
    var s = r.organization ? L.t("whyShareOrg", { org: r.organization }) : L.t("whyShare");
    return r.until ? L.t("whyUntil", { share: s, until: L.when(r.until) }) : s;
  }

  // A thumbnail: the archive's screenshot when the API has one, else the
  // placeholder. With a header identity (names or token) the image is read
  // with fetch when it scrolls into view and shown from a data: URL (an
  // <img> cannot send headers); only raster types are taken.
  var placeholder = "/assets/thumb-placeholder.svg";
  var observer = window.IntersectionObserver ? new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      if (e.isIntersecting) { observer.unobserve(e.target); fetchThumb(e.target); }
    });
  }, { rootMargin: "200px" }) : null;
  function fetchThumb(img) {
    var h = L.identity() || {};
    fetch(img.getAttribute("data-src"), { headers: h, credentials: "same-origin" }).then(function (r) {
      var type = (r.headers.get("Content-Type") || "").split(";")[0].trim();
      if (!r.ok || !/^image\/(png|jpeg|webp|gif)$/.test(type)) { throw new Error("no thumbnail"); }
      return r.blob();
    }).then(function (b) {
      return new Promise(function (resolve, reject) {
        var fr = new FileReader();
        fr.onload = function () { resolve(fr.result); };
        fr.onerror = reject;
        fr.readAsDataURL(b);
      });
    }).then(function (u) {
      if (typeof u === "string" && u.indexOf("data:image/") === 0) { img.src = u; img.classList.add("loaded"); }
    }).catch(function () { img.src = placeholder; });
  }
  function thumb(id) {
    var src = "/api/archives/" + encodeURIComponent(id) + "/thumbnail";
    if (!L.identity()) {
      // A cookie session (or nobody): the browser sends what it has.
      var direct = L.el("img", { className: "thumb", loading: "lazy", src: src, alt: "", width: 160, height: 100 });
      direct.addEventListener("error", function () { if (direct.getAttribute("src") !== placeholder) { direct.src = placeholder; } });
      return direct;
    }
    var img = L.el("img", { className: "thumb", loading: "lazy", src: placeholder, "data-src": src, alt: "", width: 160, height: 100 });
    if (observer) { observer.observe(img); } else { fetchThumb(img); }
    return img;
  }


  function row(a) {
    var note = L.el("span", { className: "note", "aria-live": "polite" });
    var name = a.title || a.sourceUrl;
    var why = (a.why || []).map(reason);
    var open = L.el("button", { type: "button", className: "open primary", title: L.t("openHint"), "aria-label": L.t("open") + ": " + name,
      onclick: function () { L.replay("/api/archives/" + encodeURIComponent(a.id) + "/replay", { page: a.sourceUrl }, note); } }, L.t("open"));
    var crawl = null;
    if (a.crawlId) {
      crawl = L.el("button", { type: "button", className: "crawl", title: L.t("replayCrawlHint"), "data-crawl": a.crawlId,
        onclick: function () { L.replay("/api/crawls/" + encodeURIComponent(a.crawlId) + "/replay", {}, note); } }, L.t("replayCrawl"));
    }
    return L.el("li", { className: "archive", "data-id": a.id },
      thumb(a.id),
      L.el("div", { className: "body" },
        L.el("h3", { className: "title" }, L.el("a", { href: "/archives/" + encodeURIComponent(a.id), className: "name" }, name)),
        a.title ? L.el("div", { className: "url" }, a.sourceUrl) : null,
        L.el("div", { className: "meta" },
          L.time(a.capturedAt),
          (a.labels || []).map(function (l) { return L.el("span", { className: "chip" }, l); }),
          a.waczComplete === false ? L.el("span", { className: "incomplete" }, L.t("incomplete")) : null,
          why.length ? L.el("span", { className: "why", title: L.t("whyLabel") }, why.join(" · ")) : null),
        L.el("div", { className: "actions" }, open, crawl, note)));
  }

  // target is the list a row goes in: the one list, or its crawl's group
  // (made the first time a row of that crawl arrives, headed by a link to
  // the crawl's page).
  function target(a) {
    if (!filters.group) {
      if (!groups[""]) { groups[""] = rows.appendChild(L.el("ul", { className: "rows" })); }
      return groups[""];
    }
    var key = a.crawlId || "-";
    if (!groups[key]) {
      var head = a.crawlId
        ? L.el("h2", {}, L.t("crawlHeading", { id: a.crawlId.slice(0, 8) }), " ", L.el("a", { href: "/crawls/" + encodeURIComponent(a.crawlId), className: "crawl-link" }, L.t("crawlLink")))
        : L.el("h2", {}, L.t("noCrawl"));
      var list = L.el("ul", { className: "rows" });
      rows.appendChild(L.el("section", { className: "group", "data-crawl": a.crawlId || "" }, head, list));
      groups[key] = list;
    }
    return groups[key];
  }

  function count() { return rows.querySelectorAll("li.archive").length; }
  function setBusy(b) { busy = b; more.disabled = b; rows.setAttribute("aria-busy", b ? "true" : "false"); }

  function query() {
    var p = new URLSearchParams();
    fields.forEach(function (k) { if (filters[k]) { p.set(k, filters[k]); } });
    if (cursor) { p.set("before", cursor.before); p.set("beforeId", cursor.beforeId || ""); }
    if (L.config.Why) { p.set("why", "1"); }
    var s = p.toString();
    return "/api/archives" + (s ? "?" + s : "");
  }

  function load(reset) {
    if (reset) {
      generation++; L.clear(rows); cursor = null; more.hidden = true; seen = {}; groups = {}; pages = 0;
    } else if (busy) {
      return;
    }
    var mine = generation;
    // The names and token forms say who is asking; until they have, there
    // is nobody to ask for.
    if ((L.who === "names" || L.who === "token") && !L.identity()) { status.textContent = L.t("unauthorized"); return; }
    status.textContent = L.t("loading");
    setBusy(true);
    L.api("GET", query()).then(function (r) {
      if (mine !== generation) { return; }
      if (!r.ok) {
        status.textContent = r.status === 400 ? L.t("filterBad", { reason: L.problem(r) }) : L.problem(r);
        // Busy: the same request works later ("load more" stays).
        more.hidden = !((r.status === 503 || r.status === 429) && cursor);
        return;
      }
      pages++;
      (r.body.archives || []).forEach(function (a) {
        if (seen[a.id]) { return; }
        seen[a.id] = true;
        target(a).appendChild(row(a));
      });
      cursor = r.body.next;
      more.hidden = !cursor;
      if (r.body.truncated) { status.textContent = L.t("truncated"); }
      else if (count() === 0) { status.textContent = filtered() ? L.t("emptyFiltered") : L.t("empty"); }
      else { status.textContent = L.t("shown", { n: count() }); }
    }).catch(function () {
      if (mine === generation) { status.textContent = L.t("failed", { n: 0 }); }
    }).then(function () { if (mine === generation) { setBusy(false); } });
  }

  // The crawls running now, of the caller's organizations: a strip above
  // the list, asked again every few seconds while any runs; when one
  // captures more or ends, the list's first page is asked again, so a
  // crawl's archives appear as they are captured.
  var strip = L.$("running"), stripList = L.$("running-list"), timer = null, last = "", settle = 0;
  function running() {
    if (timer) { clearTimeout(timer); timer = null; }
    if (!strip || !(L.config.Features && L.config.Features.Crawls)) { return; }
    if ((L.who === "names" || L.who === "token") && !L.identity()) { strip.hidden = true; return; }
    L.api("GET", "/api/crawls?state=running").then(function (r) {
      if (!r.ok || !r.body) { strip.hidden = true; return; }
      var list = (r.body.crawls || []).filter(function (c) { return c.state === "running"; });
      L.clear(stripList);
      list.forEach(function (c) {
        stripList.appendChild(L.el("li", {},
          L.el("a", { href: "/crawls/" + encodeURIComponent(c.crawlId) },
            L.t("runningRow", { seed: (c.seeds || [])[0] || c.crawlId, captured: c.pagesCaptured, discovered: c.pagesDiscovered })),
          " ", L.el("span", { className: "muted" }, L.t("startedBy", { who: c.requestedBy })), " ", L.time(c.startedAt)));
      });
      strip.hidden = list.length === 0;
      var now = list.map(function (c) { return c.crawlId + ":" + c.pagesCaptured; }).join(",");
      // When the last running crawl ends, its final archives become
      // visible only once their permissions reach OpenFGA (a moment
      // later): the list is asked again a few times while that settles.
      if (now !== last && last !== "" && !list.length) { settle = 5; }
      if (((now !== last && last !== "") || settle > 0) && pages <= 1) {
        // A list being loaded now may predate the change: try again soon.
        if (busy) { timer = setTimeout(running, 1000); return; }
        load(true);
      }
      if (settle > 0 && !list.length) { settle--; }
      last = now;
      if (list.length) { timer = setTimeout(running, 3000); } else if (settle > 0) { timer = setTimeout(running, 2000); }
    }).catch(function () { strip.hidden = true; });
  }

  function apply(f) {
    filters = f;
    toForm(f);
    load(true);
  }
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var f = fromForm();
    var to = address(f);
    if (to !== window.location.pathname + window.location.search) { window.history.pushState(null, "", to); }
    apply(f);
  });
  L.$("f-group").addEventListener("change", function () {
    // Grouping needs no new request to be meaningful, but the rows are
    // placed as they arrive: ask again.
    form.requestSubmit ? form.requestSubmit() : form.dispatchEvent(new Event("submit", { cancelable: true }));
  });
  L.$("f-clear").addEventListener("click", function (e) {
    e.preventDefault();
    window.history.pushState(null, "", window.location.pathname);
    apply(fromAddress());
  });
  window.addEventListener("popstate", function () { apply(fromAddress()); });
  more.addEventListener("click", function () { load(false); });
  document.addEventListener("identity", function () { last = ""; apply(fromAddress()); running(); });
  apply(fromAddress());
  running();
});
