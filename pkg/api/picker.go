package api

import (
	"html/template"
	"net/http"
	"strings"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// PickerView is which form the picker shows, decided on the server from the
// identity mode: names (dev headers), token (JWT) or none (deny).
type PickerView string

// The three picker views.
const (
	ViewNames PickerView = "names"
	ViewToken PickerView = "token"
	ViewNone  PickerView = "none"
)

// PickerConfig is what the picker page is built from.
type PickerConfig struct {
	View   PickerView
	Issuer string // JWT mode
	Host   string // listen host, for the header-mode warning
	Port   int
	// Why marks each row with why the caller sees it (GET /api/archives
	// ?why=1; only the candidate list knows).
	Why bool
}

const pickerDocs = "https://uraitakahito.github.io/capture-ledger/ja/picker/"

// pickerData is what the template sees; html/template escapes every value
// by context (text, attribute, JavaScript string or object).
type pickerData struct {
	Lang         string
	T            pickerText
	View         string
	Notice       string
	Warn         string
	Prompt       string
	Unauthorized string
	Docs         string
	Why          bool
}

func (c PickerConfig) data(lang i18n.Lang) pickerData {
	t := textFor(lang)
	d := pickerData{Lang: lang.String(), T: t, View: string(c.View), Docs: pickerDocs, Why: c.Why}
	switch c.View {
	case ViewNames:
		d.Prompt = t.NamesPrompt
		d.Unauthorized = t.NamesUnauthorized
		d.Notice = t.NamesNotice
		if !identity.IsLoopback(c.Host) {
			d.Warn = t.NamesWarnBefore + listenAddr(c.Host, c.Port) + t.NamesWarnAfter
		}
	case ViewToken:
		d.Prompt = t.TokenPrompt
		d.Unauthorized = t.TokenUnauthorized
		d.Notice = t.TokenNoticeBefore + c.Issuer + t.TokenNoticeAfter
	default:
		d.View = string(ViewNone)
		d.Notice = t.NoneNotice
	}
	return d
}

// pickerLang is the reader's language, from Accept-Language (every such
// header, in order): Japanese when it prefers Japanese, English otherwise.
func pickerLang(r *http.Request) i18n.Lang {
	return i18n.FromAcceptLanguage(strings.Join(r.Header.Values("Accept-Language"), ","))
}

func (s *Server) picker(w http.ResponseWriter, r *http.Request) {
	lang := pickerLang(r)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", lang.String())
	w.Header().Add("Vary", "Accept-Language")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := pickerTemplate.Execute(w, s.Picker.data(lang)); err != nil {
		s.logger().Error("picker render failed", "error", err.Error())
	}
}

var pickerTemplate = template.Must(template.New("picker").Parse(`<!doctype html>
<html lang="{{.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.T.Title}}</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #222; }
.notice { background: #f4f4f4; padding: .6rem .8rem; border-radius: 4px; }
.warn { background: #fff0f0; color: #900; padding: .6rem .8rem; border-radius: 4px; }
form { margin: 1rem 0; display: flex; gap: .5rem; flex-wrap: wrap; }
input { padding: .3rem .5rem; min-width: 14rem; }
ul#rows, ul#hits { list-style: none; padding: 0; }
ul#rows li, ul#hits li { padding: .5rem 0; border-bottom: 1px solid #eee; }
ul#rows a, ul#hits a { text-decoration: none; color: #0645ad; word-break: break-all; }
.url { color: #060; font-size: 13px; word-break: break-all; }
.snippet { margin: .2rem 0; color: #333; font-size: 14px; }
mark { background: #fe6; }
.chip { display: inline-block; background: #eef; border-radius: 9px; padding: 0 .5rem; margin-left: .3rem; font-size: 12px; }
.incomplete { color: #c00; margin-left: .5rem; font-weight: bold; }
.why { color: #555; margin-left: .5rem; font-size: 12px; }
.crawl { margin-left: .5rem; font-size: 12px; }
.note { color: #900; margin-left: .5rem; font-size: 13px; }
time { color: #666; margin-left: .5rem; font-size: 13px; white-space: nowrap; font-variant-numeric: tabular-nums; }
label { display: inline-flex; gap: .3rem; align-items: center; font-size: 13px; color: #444; }
footer { margin-top: 2rem; color: #666; font-size: 13px; }
</style>
</head>
<body data-view="{{.View}}">
<h1>{{.T.Heading}}</h1>
<p class="notice" id="notice">{{.Notice}}</p>
{{if .Warn}}<p class="warn">{{.Warn}}</p>{{end}}
{{if eq .View "names"}}
<form id="who"><label>subject <input id="subject" name="subject" placeholder="alice" autocomplete="off"></label><label>{{.T.Organizations}} <input id="orgs" name="orgs" placeholder="acme" autocomplete="off"></label><button>{{.T.Load}}</button></form>
{{else if eq .View "token"}}
<form id="who"><label>{{.T.Token}} <input id="token" name="token" placeholder="eyJ…" autocomplete="off"></label><button>{{.T.Load}}</button></form>
<p class="notice">{{.T.TokenHowTo}} <code>ledgerctl dev token --subject "$(whoami)" --org acme</code></p>
{{end}}
{{if ne .View "none"}}
<form id="find" role="search"><label>{{.T.Search}} <input id="q" name="q" type="search" autocomplete="off"></label><button>{{.T.SearchButton}}</button></form>
<p id="found" aria-live="polite"></p>
<ul id="hits"></ul>
<button id="hits-more" hidden>{{.T.SearchMore}}</button>
<p id="status" aria-live="polite">{{.Prompt}}</p>
<ul id="rows"></ul>
<button id="more" hidden>{{.T.More}}</button>
{{end}}
<footer>{{.T.Footer}} <a href="{{.Docs}}" hreflang="ja">{{.T.FooterDocs}}</a></footer>
{{if ne .View "none"}}
<script>
(function () {
  "use strict";
  var view = {{.View}}, unauthorized = {{.Unauthorized}}, text = {{.T.Script}}, why = {{.Why}};
  var rows = document.getElementById("rows"), more = document.getElementById("more"), status = document.getElementById("status");
  var cursor = null, sent = null, generation = 0, busy = false;
  function $(id) { return document.getElementById(id); }
  var store = view === "token" ? window.sessionStorage : window.localStorage;
  // The identity is read from the fields when the form is submitted, and
  // "load more" keeps using it, so one list never mixes two callers.
  function identity() {
    if (view === "token") { return { "Authorization": "Bearer " + $("token").value.trim() }; }
    return { "X-Capture-ledger-Subject": $("subject").value.trim(), "X-Capture-ledger-Organizations": $("orgs").value.trim() };
  }
  // Browsers send header values as Latin-1 bytes, which are not UTF-8:
  // only printable ASCII reaches the server as typed.
  function ascii(h) {
    for (var k in h) { if (/[^\x20-\x7e]/.test(h[k])) { return false; } }
    return true;
  }
  function remember() {
    if (view === "token") { store.setItem("capture-ui.token", $("token").value.trim()); return; }
    store.setItem("capture-ui.subject", $("subject").value.trim());
    store.setItem("capture-ui.orgs", $("orgs").value.trim());
  }
  function restore() {
    if (view === "token") { $("token").value = store.getItem("capture-ui.token") || ""; return $("token").value !== ""; }
    $("subject").value = store.getItem("capture-ui.subject") || "";
    $("orgs").value = store.getItem("capture-ui.orgs") || "";
    return $("subject").value !== "";
  }
  // fill("{n} — …", {n: 503}): the values are the API's, shown as text.
  function fill(s, values) {
    return s.replace(/\{(\w+)\}/g, function (m, k) { return Object.prototype.hasOwnProperty.call(values, k) ? String(values[k]) : m; });
  }
  // Time stamps in the page's language, with their time zone (the reader's).
  var when = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" };
  // Every value from the API goes in through textContent or an attribute
  // setter, never as markup: captured URLs and labels are outside input.
  function row(a) {
    var li = document.createElement("li"), link = document.createElement("a"), note = document.createElement("span"), who = sent;
    link.href = "#" + a.id;
    link.textContent = a.sourceUrl;
    link.addEventListener("click", function (e) { e.preventDefault(); open(a, note, who); });
    li.appendChild(link);
    note.className = "note"; note.setAttribute("aria-live", "polite");
    var t = document.createElement("time");
    t.dateTime = a.capturedAt; t.title = a.capturedAt; t.textContent = new Date(a.capturedAt).toLocaleString(text.dateLanguage, when);
    li.appendChild(t);
    (a.labels || []).forEach(function (l) { var c = document.createElement("span"); c.className = "chip"; c.textContent = l; li.appendChild(c); });
    if (a.waczComplete === false) { var x = document.createElement("span"); x.className = "incomplete"; x.textContent = text.incomplete; li.appendChild(x); }
    if (a.why && a.why.length) { var y = document.createElement("span"); y.className = "why"; y.textContent = a.why.map(reason).join(" · "); li.appendChild(y); }
    if (a.crawlId) {
      var c = document.createElement("button");
      c.type = "button"; c.className = "crawl"; c.textContent = text.replayCrawl; c.title = text.replayCrawlHint;
      c.setAttribute("data-crawl", a.crawlId);
      c.addEventListener("click", function () { replay("/api/crawls/" + encodeURIComponent(a.crawlId) + "/replay", {}, note, who); });
      li.appendChild(c);
    }
    li.appendChild(note);
    return li;
  }
  // reason says one confirmed reason the caller sees the row (the API's
  // "why"): an organization, ownership, or a share and its end.
  function reason(r) {
    if (r.kind === "organization") { return fill(text.whyOrganization, { org: r.organization }); }
    if (r.kind === "owner") { return text.whyOwner; }
    var s = r.organization ? fill(text.whyShareOrg, { org: r.organization }) : text.whyShare;
    return r.until ? fill(text.whyUntil, { share: s, until: new Date(r.until).toLocaleString(text.dateLanguage, when) }) : s;
  }
  // Opening asks the API again, as the row's caller (who), for a link to the
  // viewer (can_view once more; the link is for this archive and this
  // caller only, and reads stop when access is removed). The viewer opens
  // without an opener: its page cannot reach this one, nor the token here.
  function open(a, note, who) {
    replay("/api/archives/" + encodeURIComponent(a.id) + "/replay", { page: a.sourceUrl }, note, who);
  }
  // replay asks path for a replay session (an archive, or a crawl as one
  // collection of what the caller may view) and opens it in a new tab,
  // on the session's own origin.
  function replay(path, body, note, who) {
    note.textContent = text.opening;
    var h = { "Content-Type": "application/json" };
    for (var k in who) { h[k] = who[k]; }
    fetch(path, { method: "POST", headers: h, body: JSON.stringify(body) }).then(function (r) {
      if (r.status === 401) { note.textContent = unauthorized; return null; }
      if (r.status === 404) { note.textContent = text.gone; return null; }
      if (!r.ok) { note.textContent = fill(text.openFailed, { n: r.status }); return null; }
      return r.json();
    }).then(function (body) {
      if (!body) { return; }
      note.textContent = "";
      window.open(body.url, "_blank", "noopener");
    }).catch(function () { note.textContent = fill(text.openFailed, { n: 0 }); });
  }
  function setBusy(b) { busy = b; more.disabled = b; rows.setAttribute("aria-busy", b ? "true" : "false"); }
  function load(reset) {
    if (reset) {
      generation++; rows.textContent = ""; cursor = null; more.hidden = true; sent = identity();
      clearSearch(); found.textContent = "";
      if (view !== "token" && sent["X-Capture-ledger-Subject"] === "") { status.textContent = unauthorized; return; }
      if (!ascii(sent)) { status.textContent = text.notAscii; return; }
    } else if (busy) {
      return;
    }
    var mine = generation;
    var url = "/api/archives?" + (cursor ? "before=" + encodeURIComponent(cursor.before) + "&beforeId=" + encodeURIComponent(cursor.beforeId) + "&" : "") + (why ? "why=1" : "");
    status.textContent = text.loading;
    setBusy(true);
    fetch(url, { headers: sent }).then(function (r) {
      if (mine !== generation) { return null; }
      if (r.status === 401) { status.textContent = unauthorized; more.hidden = true; return null; }
      if (r.status === 503) {
        // Busy: nothing is wrong with the request; the same one works later
        // ("load more" stays, the form reloads the first page).
        status.textContent = fill(text.busy, { n: parseInt(r.headers.get("Retry-After"), 10) || 1 });
        more.hidden = !cursor; return null;
      }
      if (!r.ok) { status.textContent = fill(text.failed, { n: r.status }); more.hidden = true; return null; }
      return r.json();
    }).then(function (body) {
      if (!body || mine !== generation) { return; }
      body.archives.forEach(function (a) { rows.appendChild(row(a)); });
      cursor = body.next;
      more.hidden = !cursor;
      if (body.truncated) {
        status.textContent = text.truncated;
      } else {
        status.textContent = rows.children.length === 0 ? text.empty : "";
      }
      if (view === "token" && !body.truncated && rows.children.length === body.archives.length) { whoami(); }
    }).catch(function () {
      if (mine === generation) { status.textContent = fill(text.failed, { n: 0 }); }
    }).then(function () { if (mine === generation) { setBusy(false); } });
  }
  function whoami() {
    fetch("/api/me", { headers: sent }).then(function (r) { return r.ok ? r.json() : null; }).then(function (me) {
      if (!me) { return; }
      var orgs = me.organizations.length ? me.organizations.join(", ") : text.noOrgs;
      $("notice").textContent = fill(text.viewingAs, { subject: me.subject, orgs: orgs });
    });
  }
  // Search asks as the list's caller (the identity the form last sent; the
  // fields as they are when the list was never loaded), and a new list
  // clears the hits, so the hits on the page are always one caller's.
  var hits = $("hits"), hitsMore = $("hits-more"), found = $("found");
  var query = "", hitCursor = null, searchWho = null, searchGeneration = 0, searching = false, counted = "";
  function clearSearch() { searchGeneration++; hits.textContent = ""; hitCursor = null; hitsMore.hidden = true; searching = false; hitsMore.disabled = false; counted = ""; }
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
  // marked fills el from one highlighted string of the API (escaped, the
  // matches between <mark> and </mark>): each piece between the marks is
  // un-escaped and goes in as a text node, a marked one inside a <mark>
  // element made here. The server's text is never parsed as markup.
  function marked(el, s) {
    var inside = false;
    s.split(/(<mark>|<\/mark>)/).forEach(function (p) {
      if (p === "<mark>") { inside = true; return; }
      if (p === "</mark>") { inside = false; return; }
      if (p === "") { return; }
      var t = document.createTextNode(unescape(p));
      if (!inside) { el.appendChild(t); return; }
      var m = document.createElement("mark"); m.appendChild(t); el.appendChild(m);
    });
  }
  function hit(h) {
    var li = document.createElement("li"), link = document.createElement("a"), note = document.createElement("span"), who = searchWho;
    link.href = "#" + h.archiveId;
    if (h.titleHighlight) { marked(link, h.titleHighlight); } else { link.textContent = h.url; }
    // The viewer opens at the page that matched, not the archive's first.
    link.addEventListener("click", function (e) { e.preventDefault(); open({ id: h.archiveId, sourceUrl: h.url }, note, who); });
    li.appendChild(link);
    note.className = "note"; note.setAttribute("aria-live", "polite");
    var t = document.createElement("time");
    t.dateTime = h.capturedAt; t.title = h.capturedAt; t.textContent = new Date(h.capturedAt).toLocaleString(text.dateLanguage, when);
    li.appendChild(t);
    (h.labels || []).forEach(function (l) { var c = document.createElement("span"); c.className = "chip"; c.textContent = l; li.appendChild(c); });
    li.appendChild(note);
    var u = document.createElement("div"); u.className = "url"; u.textContent = h.url; li.appendChild(u);
    (h.highlight || []).forEach(function (f) { var p = document.createElement("p"); p.className = "snippet"; marked(p, f); li.appendChild(p); });
    if (h.textWithheld) { var w = document.createElement("p"); w.className = "snippet"; w.textContent = fill(text.withheld, { reason: h.textWithheld }); li.appendChild(w); }
    return li;
  }
  function search(reset) {
    if (reset) {
      clearSearch();
      query = $("q").value.trim(); searchWho = sent || identity();
      if (query === "") { found.textContent = text.searchEmpty; return; }
      if (view !== "token" && searchWho["X-Capture-ledger-Subject"] === "") { found.textContent = unauthorized; return; }
      if (!ascii(searchWho)) { found.textContent = text.notAscii; return; }
    } else if (searching) {
      return;
    }
    var mine = searchGeneration, first = !hitCursor;
    var url = "/api/search?q=" + encodeURIComponent(query) + (hitCursor ? "&cursor=" + encodeURIComponent(hitCursor) : "");
    found.textContent = text.searching;
    searching = true; hitsMore.disabled = true;
    fetch(url, { headers: searchWho }).then(function (r) {
      if (mine !== searchGeneration) { return null; }
      if (r.status === 401) { found.textContent = unauthorized; hitsMore.hidden = true; return null; }
      if (r.status === 503) { found.textContent = fill(text.busy, { n: parseInt(r.headers.get("Retry-After"), 10) || 1 }); hitsMore.hidden = !hitCursor; return null; }
      if (r.status === 404) { found.textContent = text.searchOff; hitsMore.hidden = true; return null; }
      if (r.status === 400) {
        hitsMore.hidden = true;
        return r.json().then(function (b) {
          if (mine === searchGeneration) { found.textContent = fill(text.searchBad, { reason: b && typeof b.message === "string" ? b.message : "" }); }
          return null;
        }, function () { if (mine === searchGeneration) { found.textContent = fill(text.searchFailed, { n: 400 }); } return null; });
      }
      if (!r.ok) { found.textContent = fill(text.searchFailed, { n: r.status }); hitsMore.hidden = true; return null; }
      return r.json();
    }).then(function (body) {
      if (!body || mine !== searchGeneration) { return; }
      body.hits.forEach(function (h) { hits.appendChild(hit(h)); });
      hitCursor = body.next;
      hitsMore.hidden = !hitCursor;
      if (body.truncated) {
        found.textContent = text.searchTruncated;
      } else if (hits.children.length === 0) {
        found.textContent = text.noHits;
      } else {
        // Only the first page has a total; later pages keep its line.
        if (first) { counted = typeof body.total === "number" ? fill(body.totalExact ? text.hitsExact : text.hitsAtLeast, { n: body.total }) : ""; }
        found.textContent = counted;
      }
    }).catch(function () {
      if (mine === searchGeneration) { found.textContent = fill(text.searchFailed, { n: 0 }); }
    }).then(function () { if (mine === searchGeneration) { searching = false; hitsMore.disabled = false; } });
  }
  $("find").addEventListener("submit", function (e) { e.preventDefault(); search(true); });
  hitsMore.addEventListener("click", function () { search(false); });
  $("who").addEventListener("submit", function (e) { e.preventDefault(); remember(); load(true); });
  more.addEventListener("click", function () { load(false); });
  if (restore()) { load(true); }
})();
</script>
{{end}}
</body>
</html>
`))
