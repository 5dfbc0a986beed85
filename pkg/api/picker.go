package api

import (
	"html/template"
	"net"
	"net/http"
	"strconv"

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
// by context (text, attribute, JavaScript string).
type pickerData struct {
	View         string
	Notice       string
	Warn         string
	Prompt       string
	Unauthorized string
	ReplayOrigin string
	Docs         string
}

func (c PickerConfig) data() pickerData {
	d := pickerData{View: string(c.View), ReplayOrigin: c.ReplayOrigin, Docs: pickerDocs}
	switch c.View {
	case ViewNames:
		d.Prompt = "subject を入れて「読み込む」"
		d.Unauthorized = "401 — subject が空（この API は開発用ヘッダで名乗る設定）"
		d.Notice = "この API は開発用ヘッダで名乗る設定。入れた subject と組織をそのまま信じる —— 誰でも誰にでもなれる。"
		if !identity.IsLoopback(c.Host) {
			d.Warn = "この API は " + net.JoinHostPort(c.Host, strconv.Itoa(c.Port)) + " で待ちながら、名乗りをそのまま信じる —— 同じネットワークの誰もが、誰にでもなれる。127.0.0.1 で待たせる（CAPTURE_LEDGER_API_HOST=127.0.0.1）か、JWT の設定（CAPTURE_LEDGER_OIDC_ISSUER）に戻す"
		}
	case ViewToken:
		d.Prompt = "トークンを貼って「読み込む」"
		d.Unauthorized = "401 — このトークンは通らない（期限切れ・issuer を起こし直した後・別の issuer のもの）。取り直して貼る"
		d.Notice = "この API は JWT で名乗る設定（" + c.Issuer + "）。その issuer が刷ったトークンを貼る"
	default:
		d.View = string(ViewNone)
		d.Notice = "この API には名乗りの設定が無く、誰の一覧も出せない（全員 401）—— .env に CAPTURE_LEDGER_OIDC_ISSUER か CAPTURE_LEDGER_DEV_IDENTITY=1 を書いて、API を起こし直す"
	}
	return d
}

func (s *Server) picker(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := pickerTemplate.Execute(w, s.Picker.data()); err != nil {
		s.logger().Error("picker render failed", "error", err.Error())
	}
}

var pickerTemplate = template.Must(template.New("picker").Parse(`<!doctype html>
<html lang="ja">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>アーカイブを選ぶ — capture-ledger</title>
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
<h1>アーカイブを選ぶ</h1>
<p class="notice" id="notice">{{.Notice}}</p>
{{if .Warn}}<p class="warn">{{.Warn}}</p>{{end}}
{{if eq .View "names"}}
<form id="who"><label>subject <input id="subject" name="subject" placeholder="alice" autocomplete="off"></label><label>組織（カンマ区切り） <input id="orgs" name="orgs" placeholder="acme" autocomplete="off"></label><button>読み込む</button></form>
{{else if eq .View "token"}}
<form id="who"><label>トークン <input id="token" name="token" placeholder="eyJ…" autocomplete="off"></label><button>読み込む</button></form>
<p class="notice">トークンの刷り方: <code>ledgerctl dev token --subject "$(whoami)" --org acme</code></p>
{{end}}
{{if ne .View "none"}}
<p id="status" aria-live="polite">{{.Prompt}}</p>
<ul id="rows"></ul>
<button id="more" hidden>さらに読む</button>
{{end}}
<footer>絞り込まれるのは一覧だけ。<code>/wacz/&lt;key&gt;</code> の読み出し（replay）には認可が無い。<a href="{{.Docs}}">picker の説明</a></footer>
{{if ne .View "none"}}
<script>
(function () {
  "use strict";
  var view = {{.View}}, replay = {{.ReplayOrigin}}, unauthorized = {{.Unauthorized}};
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
    t.dateTime = a.capturedAt; t.textContent = new Date(a.capturedAt).toLocaleString(undefined, when);
    li.appendChild(t);
    (a.labels || []).forEach(function (l) { var c = document.createElement("span"); c.className = "chip"; c.textContent = l; li.appendChild(c); });
    if (a.waczComplete === false) { var x = document.createElement("span"); x.className = "incomplete"; x.textContent = "欠けあり"; li.appendChild(x); }
    return li;
  }
  function setBusy(b) { busy = b; more.disabled = b; rows.setAttribute("aria-busy", b ? "true" : "false"); }
  function load(reset) {
    if (reset) {
      generation++; rows.textContent = ""; cursor = null; more.hidden = true; sent = identity();
      if (view !== "token" && sent["X-Capture-ledger-Subject"] === "") { status.textContent = unauthorized; return; }
      if (!ascii(sent)) { status.textContent = "subject と組織は半角英数字で（ブラウザはヘッダに日本語などを入れられない）"; return; }
    } else if (busy) {
      return;
    }
    var mine = generation;
    var url = "/api/archives" + (cursor ? "?before=" + encodeURIComponent(cursor.before) + "&beforeId=" + encodeURIComponent(cursor.beforeId) : "");
    status.textContent = "読み込み中…";
    setBusy(true);
    fetch(url, { headers: sent }).then(function (r) {
      if (mine !== generation) { return null; }
      if (r.status === 401) { status.textContent = unauthorized; more.hidden = true; return null; }
      if (!r.ok) { status.textContent = r.status + " — 一覧を取れなかった"; more.hidden = true; return null; }
      return r.json();
    }).then(function (body) {
      if (!body || mine !== generation) { return; }
      body.archives.forEach(function (a) { rows.appendChild(row(a)); });
      cursor = body.next;
      more.hidden = !cursor;
      if (body.truncated) {
        status.textContent = "見えるアーカイブを探す途中で区切った —「さらに読む」で続きを探す";
      } else {
        status.textContent = rows.children.length === 0 ? "見えるアーカイブが無い" : "";
      }
      if (view === "token" && !body.truncated && rows.children.length === body.archives.length) { whoami(); }
    }).catch(function () {
      if (mine === generation) { status.textContent = "0 — 一覧を取れなかった"; }
    }).then(function () { if (mine === generation) { setBusy(false); } });
  }
  function whoami() {
    fetch("/api/me", { headers: sent }).then(function (r) { return r.ok ? r.json() : null; }).then(function (me) {
      if (!me) { return; }
      var orgs = me.organizations.length ? me.organizations.join(", ") : "組織なし";
      $("notice").textContent = me.subject + "（" + orgs + "）として見ている";
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
