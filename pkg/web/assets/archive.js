// The archive page: GET /api/archives/{id} says what the archive is and
// what the caller may do; each action is its own API call, checked there
// again. Every string from the API is set as text, never as markup.
L.screen("archive", function () {
  "use strict";
  var root = L.$("archive-page");
  var id = root.getAttribute("data-id");
  var base = "/api/archives/" + encodeURIComponent(id);
  var status = L.$("status");
  var current = null;

  function say(el, text, bad) {
    el.textContent = text || "";
    el.className = bad ? "error" : "";
  }

  function reason(r) {
    var until = r.until ? L.when(r.until) : "";
    if (r.kind === "organization") { return L.t("whyOrg", { org: r.organization }); }
    if (r.kind === "owner") { return L.t("whyOwner"); }
    if (r.kind === "share" && r.organization) { return L.t("whyShareOrg", { org: r.organization, t: until }); }
    if (r.kind === "share") { return L.t("whyShareUser", { t: until }); }
    return L.t("whyUnknown");
  }

  function fact(dl, label, value) {
    L.append(dl, [L.el("dt", null, label), L.el("dd", null, value)]);
  }

  // The picture: fetched with the caller's identity (an <img> request
  // carries no identity headers) and shown as a data: URL; a placeholder
  // when there is none or it cannot be read.
  function thumbnail() {
    var img = L.$("thumb"), none = L.$("no-thumb");
    function placeholder() { img.hidden = true; none.hidden = false; }
    var h = L.identity() || {};
    fetch(base + "/thumbnail", { headers: h, credentials: "same-origin" }).then(function (r) {
      var type = r.headers.get("Content-Type") || "";
      if (!r.ok || type.indexOf("image/") !== 0) { throw new Error("no picture"); }
      return r.blob();
    }).then(function (b) {
      var fr = new FileReader();
      fr.onload = function () {
        if (String(fr.result).indexOf("data:image/") !== 0) { placeholder(); return; }
        img.onerror = placeholder;
        img.src = fr.result;
        img.hidden = false; none.hidden = true;
      };
      fr.onerror = placeholder;
      fr.readAsDataURL(b);
    }).catch(placeholder);
  }

  function show(a) {
    current = a;
    L.$("archive").hidden = false;
    status.textContent = "";
    var name = a.title || a.sourceUrl;
    L.$("archive-name").textContent = name;
    document.title = name + " · " + L.t("product");
    var dl = L.clear(L.$("facts"));
    fact(dl, L.t("factUrl"), L.el("span", { className: "url" }, a.sourceUrl));
    fact(dl, L.t("factCaptured"), L.time(a.capturedAt));
    fact(dl, L.t("factOrg"), a.organization || "");
    fact(dl, L.t("factCrawl"), a.crawlId ? L.el("a", { href: "/crawls/" + encodeURIComponent(a.crawlId) }, a.crawlId) : L.t("noCrawl"));
    if (a.waczComplete === false) { fact(dl, L.t("factComplete"), L.t("incomplete")); }
    var why = L.el("ul", { className: "why" });
    (a.why || []).forEach(function (r) { L.append(why, L.el("li", null, reason(r))); });
    if (!(a.why || []).length) { L.append(why, L.el("li", null, L.t("whyUnknown"))); }
    fact(dl, L.t("factWhy"), why);
    var may = a.may || {};
    L.$("open").hidden = !may.open;
    L.$("download").hidden = !may.download;
    // A crawl's capture may hold revisits of files another page of the
    // crawl stored: say where the whole crawl downloads.
    L.$("crawl-hint").hidden = L.$("crawl-download").hidden = !(may.download && a.crawlId);
    L.$("share").hidden = !may.share;
    L.$("delete").hidden = !may["delete"];
    L.$("view-only").hidden = !!(may.share || may["delete"]);
    thumbnail();
    if (may.share) { shares(); }
  }

  function load() {
    if (!L.identity() && L.who !== "none") {
      status.textContent = L.t("unauthorized");
      return;
    }
    status.textContent = L.t("loading");
    L.api("GET", base).then(function (r) {
      if (!r.ok) {
        L.$("archive").hidden = true;
        say(status, L.problem(r), true);
        L.$("gone").hidden = false;
        return;
      }
      show(r.body);
    }).catch(function (e) { say(status, String(e), true); });
  }

  // Open: a replay link for this caller, in a new tab without opener.
  L.$("open").addEventListener("click", function () {
    var out = L.$("action-status");
    var tab = window.open("about:blank", "_blank");
    if (tab) { try { tab.opener = null; } catch (e) { /* cross-origin already */ } }
    L.api("POST", base + "/replay", { page: current.sourceUrl }).then(function (r) {
      if (!r.ok) { if (tab) { tab.close(); } say(out, L.problem(r), true); return; }
      if (tab) { tab.location.href = r.body.url; say(out, ""); return; }
      L.clear(out);
      L.append(out, [L.t("popupBlocked"), " ", L.el("a", { href: r.body.url, target: "_blank", rel: "noopener noreferrer" }, L.t("openLink"))]);
    });
  });

  // Download: a short-lived link to this origin's read of the WACZ; the
  // bucket's address never reaches the page.
  L.$("download").addEventListener("click", function () {
    L.download(base + "/download", L.$("action-status"), L.t("downloading"));
  });
  // The crawl this archive is part of, as one WACZ: what the person may
  // view of it (they may view this archive, so at least that).
  L.$("crawl-download").addEventListener("click", function () {
    if (current && current.crawlId) {
      L.download("/api/crawls/" + encodeURIComponent(current.crawlId) + "/download", L.$("action-status"), L.t("crawlDownloading"), L.crawlDownloadBusy);
    }
  });

  function granteeText(s) {
    return s.user !== null && s.user !== undefined ? L.t("userMark", { name: s.user }) : L.t("orgMark", { name: s.organization });
  }

  function shares() {
    L.api("GET", base + "/shares").then(function (r) {
      var body = L.clear(L.$("shares").tBodies[0]);
      if (!r.ok) { say(L.$("share-status"), L.problem(r), true); return; }
      var all = (r.body.active || []).concat(r.body.past || []);
      L.$("no-shares").hidden = all.length > 0;
      L.$("shares").hidden = all.length === 0;
      all.forEach(function (s) {
        var who = granteeText(s);
        var cell = L.el("td");
        if (s.status === "active") {
          L.append(cell, L.el("button", { type: "button", className: "revoke", "aria-label": L.t("revokeLabel", { name: s.user || s.organization }), "data-share": s.id, onclick: function () { revoke(s); } }, L.t("revoke")));
        }
        L.append(body, L.el("tr", { "data-share": s.id },
          L.el("td", null, who), L.el("td", null, s.grantedBy), L.el("td", null, L.time(s.expiresAt)),
          L.el("td", null, L.t("st_" + s.status)), cell));
      });
    });
  }

  function revoke(s) {
    L.api("DELETE", base + "/shares/" + encodeURIComponent(s.id)).then(function (r) {
      if (!r.ok) { say(L.$("share-status"), L.problem(r), true); return; }
      say(L.$("share-status"), L.t("revoked", { name: s.user || s.organization }));
      shares();
    });
  }

  L.$("share-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var kind = L.$("share-kind").value, name = L.$("share-name").value.trim();
    var req = { duration: L.$("share-for").value };
    req[kind] = name;
    L.api("POST", base + "/shares", req).then(function (r) {
      if (!r.ok) { say(L.$("share-status"), L.problem(r), true); return; }
      say(L.$("share-status"), L.t("shared", { name: name, t: L.when(r.body.expiresAt) }));
      L.$("share-name").value = "";
      shares();
    });
  });

  // Delete: a dialog that asks for a word typed before it does anything.
  var dialog = L.$("delete-dialog"), word = L.$("delete-word");
  L.$("delete-text").textContent = L.t("deleteConfirm", { word: L.t("confirmWord") });
  L.$("delete-open").addEventListener("click", function () {
    word.value = ""; L.$("delete-now").disabled = true;
    dialog.showModal();
    word.focus();
  });
  word.addEventListener("input", function () { L.$("delete-now").disabled = word.value.trim() !== L.t("confirmWord"); });
  L.$("delete-cancel").addEventListener("click", function () { dialog.close(); });
  L.$("delete-form").addEventListener("submit", function (e) {
    e.preventDefault();
    if (word.value.trim() !== L.t("confirmWord")) { return; }
    dialog.close();
    L.api("DELETE", base).then(function (r) {
      if (!r.ok) { say(L.$("action-status"), L.problem(r), true); return; }
      L.$("archive").hidden = true;
      say(status, r.status === 202 ? L.t("deletedLater") : L.t("deleted"));
      L.$("gone").hidden = false;
    });
  });

  document.addEventListener("identity", load);
  load();
});
