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
	View         PickerView
	Issuer       string // JWT mode
	Host         string // listen host, for the header-mode warning
	Port         int
	ReplayOrigin string
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
	ReplayOrigin string
	Docs         string
}

func (c PickerConfig) data(lang i18n.Lang) pickerData {
	t := textFor(lang)
	d := pickerData{Lang: lang.String(), T: t, View: string(c.View), ReplayOrigin: c.ReplayOrigin, Docs: pickerDocs}
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
ul#rows { list-style: none; padding: 0; }
ul#rows li { padding: .5rem 0; border-bottom: 1px solid #eee; }
ul#rows a { text-decoration: none; color: #0645ad; word-break: break-all; }
.chip { display: inline-block; background: #eef; border-radius: 9px; padding: 0 .5rem; margin-left: .3rem; font-size: 12px; }
.incomplete { color: #c00; margin-left: .5rem; font-weight: bold; }
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
<p id="status" aria-live="polite">{{.Prompt}}</p>
<ul id="rows"></ul>
<button id="more" hidden>{{.T.More}}</button>
{{end}}
<footer>{{.T.FooterBefore}}<code>/wacz/&lt;key&gt;</code>{{.T.FooterAfter}}<a href="{{.Docs}}" hreflang="ja">{{.T.FooterDocs}}</a></footer>
{{if ne .View "none"}}
<script>
(function () {
  "use strict";
  var view = {{.View}}, replay = {{.ReplayOrigin}}, unauthorized = {{.Unauthorized}}, text = {{.T.Script}};
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
    var li = document.createElement("li"), link = document.createElement("a");
    link.href = replay + "/?source=/wacz/" + encodeURIComponent(a.objectKey);
    link.target = "_blank"; link.rel = "noopener";
    link.textContent = a.sourceUrl;
    li.appendChild(link);
    var t = document.createElement("time");
    t.dateTime = a.capturedAt; t.title = a.capturedAt; t.textContent = new Date(a.capturedAt).toLocaleString(text.dateLanguage, when);
    li.appendChild(t);
    (a.labels || []).forEach(function (l) { var c = document.createElement("span"); c.className = "chip"; c.textContent = l; li.appendChild(c); });
    if (a.waczComplete === false) { var x = document.createElement("span"); x.className = "incomplete"; x.textContent = text.incomplete; li.appendChild(x); }
    return li;
  }
  function setBusy(b) { busy = b; more.disabled = b; rows.setAttribute("aria-busy", b ? "true" : "false"); }
  function load(reset) {
    if (reset) {
      generation++; rows.textContent = ""; cursor = null; more.hidden = true; sent = identity();
      if (view !== "token" && sent["X-Capture-ledger-Subject"] === "") { status.textContent = unauthorized; return; }
      if (!ascii(sent)) { status.textContent = text.notAscii; return; }
    } else if (busy) {
      return;
    }
    var mine = generation;
    var url = "/api/archives" + (cursor ? "?before=" + encodeURIComponent(cursor.before) + "&beforeId=" + encodeURIComponent(cursor.beforeId) : "");
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
  $("who").addEventListener("submit", function (e) { e.preventDefault(); remember(); load(true); });
  more.addEventListener("click", function () { load(false); });
  if (restore()) { load(true); }
})();
</script>
{{end}}
</body>
</html>
`))
