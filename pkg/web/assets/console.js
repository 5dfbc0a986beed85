// The console's shared script: texts, the caller's identity, API calls,
// safe DOM building and dates. Screens add themselves with L.screen(name, fn).
// Every value from the API reaches the page as text (textContent or an
// attribute), never as markup: archived titles, URLs and reasons are
// outside input.
(function () {
  "use strict";
  var L = window.L = {};
  function json(id) { var e = document.getElementById(id); return e ? JSON.parse(e.textContent) : {}; }
  L.text = json("console-text");
  L.config = json("console-config");
  L.who = document.body.getAttribute("data-who");

  // L.t("key", {n: 3}): the text in the page's language, {name}s filled
  // with values shown as given. When n is 1 and the language has a
  // singular for the key ("key_one": English), that text is used.
  L.t = function (key, values) {
    if (values && values.n === 1 && Object.prototype.hasOwnProperty.call(L.text, key + "_one")) { key += "_one"; }
    var s = Object.prototype.hasOwnProperty.call(L.text, key) ? L.text[key] : key;
    if (!values) { return s; }
    return s.replace(/\{(\w+)\}/g, function (m, k) { return Object.prototype.hasOwnProperty.call(values, k) ? String(values[k]) : m; });
  };

  // L.el("a", {href: u, className: "x"}, "text", child…): an element whose
  // attributes are set as properties or attributes and whose children are
  // nodes or text. Never parses markup.
  L.el = function (tag, attrs) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (!Object.prototype.hasOwnProperty.call(attrs, k) || attrs[k] === undefined || attrs[k] === null) { continue; }
      if (k === "className" || k === "textContent" || k === "value" || k === "checked" || k === "disabled" || k === "hidden" || k === "type") { e[k] = attrs[k]; }
      else if (k.slice(0, 2) === "on" && typeof attrs[k] === "function") { e.addEventListener(k.slice(2), attrs[k]); }
      else { e.setAttribute(k, String(attrs[k])); }
    }
    for (var i = 2; i < arguments.length; i++) { L.append(e, arguments[i]); }
    return e;
  };
  L.append = function (parent, c) {
    if (c === undefined || c === null || c === false) { return parent; }
    if (Array.isArray(c)) { c.forEach(function (x) { L.append(parent, x); }); return parent; }
    parent.appendChild(typeof c === "object" ? c : document.createTextNode(String(c)));
    return parent;
  };
  L.clear = function (e) { while (e.firstChild) { e.removeChild(e.firstChild); } return e; };
  L.$ = function (id) { return document.getElementById(id); };

  // Dates in the page's language and the reader's time zone.
  var when = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" };
  L.when = function (iso) {
    if (!iso) { return ""; }
    var d = new Date(iso);
    return isNaN(d) ? String(iso) : d.toLocaleString(L.t("dateLanguage"), when);
  };
  // L.time(iso): a <time> element showing L.when(iso).
  L.time = function (iso) { return L.el("time", { datetime: iso, title: iso }, L.when(iso)); };

  // The identity the API is told: the form's values, kept in storage (the
  // names form in localStorage; a token only for this tab). Signed in
  // through OIDC ("oidc"), the session cookie says it: no header.
  var store = L.who === "token" ? window.sessionStorage : window.localStorage;
  L.identity = function () {
    if (L.who === "token") {
      var tok = store.getItem("capture-ui.token") || "";
      return tok ? { "Authorization": "Bearer " + tok } : null;
    }
    if (L.who === "names") {
      var s = store.getItem("capture-ui.subject") || "";
      return s ? { "X-Capture-ledger-Subject": s, "X-Capture-ledger-Organizations": store.getItem("capture-ui.orgs") || "" } : null;
    }
    return null;
  };
  function restore() {
    var f = L.$("who");
    // The sign-in and sign-out forms post to the server as they are.
    if (!f || (L.who !== "token" && L.who !== "names")) { return; }
    if (L.who === "token") { L.$("token").value = store.getItem("capture-ui.token") || ""; }
    if (L.who === "names") { L.$("subject").value = store.getItem("capture-ui.subject") || ""; L.$("orgs").value = store.getItem("capture-ui.orgs") || ""; }
    f.addEventListener("submit", function (e) {
      e.preventDefault();
      if (L.who === "token") { store.setItem("capture-ui.token", L.$("token").value.trim()); }
      if (L.who === "names") {
        // Browsers send header values as Latin-1 bytes: only printable
        // ASCII reaches the server as typed.
        var s = L.$("subject").value.trim(), o = L.$("orgs").value.trim();
        if (/[^\x20-\x7e]/.test(s + o)) { L.$("subject").setCustomValidity("ASCII"); L.$("subject").reportValidity(); return; }
        store.setItem("capture-ui.subject", s); store.setItem("capture-ui.orgs", o);
      }
      L.me = null;
      document.dispatchEvent(new CustomEvent("identity"));
    });
  }

  // L.api(method, path, body): a promise of {status, body, headers} for
  // the JSON API, as the current identity. A CSRF token the page carries
  // (<meta name="csrf-token">) goes with every call.
  L.api = function (method, path, body) {
    var h = { "Accept": "application/json" };
    var who = L.identity();
    for (var k in who || {}) { h[k] = who[k]; }
    var meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) { h["X-CSRF-Token"] = meta.getAttribute("content"); }
    var init = { method: method, headers: h, credentials: "same-origin" };
    if (body !== undefined) { h["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    return fetch(path, init).then(function (r) {
      return r.text().then(function (t) {
        var b = null;
        try { b = t ? JSON.parse(t) : null; } catch (e) { b = { error: t }; }
        return { status: r.status, body: b, headers: r.headers, ok: r.ok };
      });
    });
  };
  // L.problem(r): a sentence for a failed answer, in the page's language.
  L.problem = function (r) {
    if (r.status === 401) { return L.t(L.who === "oidc" ? "signInFirst" : "unauthorized"); }
    if (r.status === 404) { return L.t("gone"); }
    if (r.status === 503) { return L.t("unavailable", { s: r.headers.get("Retry-After") || "5" }); }
    if (r.status === 429) { return L.t("tooMany", { s: r.headers.get("Retry-After") || "1" }); }
    var m = r.body && (r.body.message || r.body.error);
    return m ? String(m) : L.t("failed", { n: r.status });
  };
  // L.me(): the caller (GET /api/me), asked once per identity.
  var mePromise = null;
  L.whoami = function () {
    if (!mePromise || L.me === null) { L.me = undefined; mePromise = L.api("GET", "/api/me"); }
    return mePromise;
  };

  // L.replay(path, body, note) asks path for a replay session (an archive,
  // or a crawl as one collection of what the caller may view) and opens it
  // in a new tab without an opener, on the session's own origin; note says
  // how it went. The API checks again.
  L.replay = function (path, body, note) {
    note.classList.remove("info");
    note.textContent = L.t("opening");
    L.api("POST", path, body).then(function (r) {
      if (!r.ok || !r.body || typeof r.body.url !== "string") {
        note.textContent = r.status === 404 ? L.t("goneArchive") : (r.status === 401 ? L.t("unauthorized") : L.t("openFailed", { n: r.status }));
        return;
      }
      // Not an error: said in the text's colour, not the failures'.
      note.textContent = L.replayLimit(r.body);
      note.classList.toggle("info", note.textContent !== "");
      window.open(r.body.url, "_blank", "noopener");
    }).catch(function () { note.textContent = L.t("openFailed", { n: 0 }); });
  };

  // L.download(path, note, started, busy) asks path (POST) for a download
  // link on this origin (an archive's WACZ, or a crawl's as one) and has
  // the browser save what it reads; note says started, or why not: busy,
  // when given, names the text of a refusal by its status (a crawl's
  // download takes its place when the link is made, so a full bound is
  // said here, not as a failed download). No bucket address reaches the
  // page.
  L.download = function (path, note, started, busy) {
    L.clear(note);
    L.api("POST", path, {}).then(function (r) {
      if (!r.ok || !r.body || typeof r.body.url !== "string" || r.body.url.charAt(0) !== "/" || r.body.url.charAt(1) === "/") {
        var key = busy && busy[r.status];
        note.textContent = key ? L.t(key, { s: r.headers.get("Retry-After") || "10" }) : L.problem(r);
        return;
      }
      var a = L.el("a", { href: r.body.url, download: r.body.filename, hidden: true });
      document.body.appendChild(a);
      a.click();
      a.remove();
      note.textContent = started;
    });
  };

  // L.replayLimit(link) is what a crawl's replay link says when its
  // collection lists only the crawl's first captures ("" otherwise).
  L.replayLimit = function (link) {
    var n = Number(link.limit);
    if (!(n > 0)) { return ""; }
    var num = function (x) { return Number(x).toLocaleString(L.t("dateLanguage")); };
    // n itself when 1, so that L.t picks the singular.
    return L.t("replayLimit", { n: n === 1 ? 1 : num(n), k: num(link.archives || 0) });
  };

  // L.crawlDownloadBusy: a crawl download's refusals for want of a place.
  L.crawlDownloadBusy = { 429: "crawlDownloadBusy", 503: "crawlDownloadFull" };

  var screens = {};
  L.screen = function (name, fn) { screens[name] = fn; };
  document.addEventListener("DOMContentLoaded", function () {
    restore();
    var fn = screens[document.body.getAttribute("data-screen")];
    if (fn) { fn(); }
  });
})();
