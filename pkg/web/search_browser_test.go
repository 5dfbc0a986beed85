package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// addPageArchive registers an archive of one page captured at `at` by
// org: its WACZ in the bucket, its ledger row (the page's URL as source
// URL), its recorded grantee and its admission tuples in OpenFGA. Serve's
// indexer picks it up.
func addPageArchive(t *testing.T, env *apptest.Env, org, pageURL, text string, at time.Time) string {
	t.Helper()
	ctx := context.Background()
	id, task := uuid.NewString(), uuid.NewString()
	var buf bytes.Buffer
	if _, err := wacz.Write(&buf, wacz.Capture{Created: at, Pages: []wacz.Page{{URL: pageURL, Date: at, Title: "Orchard news", Text: text}}}); err != nil {
		t.Fatal(err)
	}
	key := "org/" + org + "/" + task + ".wacz"
	if err := env.Blob.Put(ctx, env.Bucket, key, "application/wacz", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The row and its recorded grantee in one transaction, as an
	// admission writes them: the indexer, woken by the insert, reads the
	// grantees with the row (apart, it could index the archive before its
	// grantee was recorded, and no one would ever see it).
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO archives (id, task_id, bucket, object_key, source_url, captured_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		id, task, env.Bucket, key, pageURL, at); err != nil {
		t.Fatal(err)
	}
	if err := apptest.CopySources(ctx, tx, []apptest.Source{{ArchiveID: id, TaskID: task, At: at, Kind: ledger.ReasonOrganization, Principal: org}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var tuples []authz.Tuple
	for _, tu := range ledger.AdmissionTuples(id, task, org, nil).Writes {
		tuples = append(tuples, authz.Tuple{User: tu.User, Relation: tu.Relation, Object: tu.Object})
	}
	if err := env.FGA.Write(ctx, tuples, nil); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSearchOtherCapturesInTheBrowser is the search screen on a whole
// serve (real index, ledger and OpenFGA): a page acme captured three times
// shows once, as its newest capture, with "2 other captures of this page"
// — globex's still newer capture is neither the hit nor counted — and the
// disclosure links each older capture, newest first, to its archive's
// page, which the link opens. The same in Japanese.
func TestSearchOtherCapturesInTheBrowser(t *testing.T) {
	t.Parallel()
	s := startServe(t, nil)
	env := s.Env
	const story = "https://orchard.example/story"
	base := time.Now().Add(-4 * time.Hour).UTC().Truncate(time.Second)
	oldest := addPageArchive(t, env, "acme", story, "plum plum plum plum in the orchard", base)
	middle := addPageArchive(t, env, "acme", story, "plum in the orchard", base.Add(time.Hour))
	newest := addPageArchive(t, env, "acme", story, "plum plum in the orchard", base.Add(2*time.Hour))
	addPageArchive(t, env, "globex", story, "plum plum plum plum plum plum in the orchard", base.Add(3*time.Hour))
	once := addPageArchive(t, env, "acme", "https://orchard.example/once", "one plum in the orchard", base.Add(30*time.Minute))

	// Serve's indexer indexes them in the background.
	var body string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		var code int
		code, body = call(t, "GET", s.URL+"/api/search?q=plum", "alice", "acme", "")
		if code == 200 && strings.Contains(body, `"total":2,`) && strings.Contains(body, once) && strings.Contains(body, `"otherCaptures":[{"archiveId":"`+middle) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the captures were not searchable in 60 s: %d %s", code, body)
		}
	}
	var page struct {
		Hits []struct {
			ArchiveID string `json:"archiveId"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil || len(page.Hits) != 2 {
		t.Fatalf("the API's answer %s: %v", body, err)
	}

	ctx := testenv.BrowserTab(t, 3*time.Minute, chromedp.WindowSize(1280, 900))
	signIn(t, ctx, s.URL, "alice", "acme")
	const state = `(function () {
		var hits = Array.from(document.querySelectorAll("#hits li.hit"));
		var story = hits.filter(function (li) { return li.querySelector(".url").textContent === "https://orchard.example/story"; });
		var d = story.length ? story[0].querySelector("details.others") : null;
		return JSON.stringify({
			found: document.getElementById("found").textContent,
			hits: hits.map(function (li) { return li.getAttribute("data-archive"); }),
			summary: d ? d.querySelector("summary").textContent : "",
			links: d ? Array.from(d.querySelectorAll("a")).map(function (a) { return a.getAttribute("href") + " " + a.textContent; }) : [],
			onceOthers: hits.filter(function (li) { return li.querySelector("details.others"); }).length
		});
	})()`
	type screenState struct {
		Found      string   `json:"found"`
		Hits       []string `json:"hits"`
		Summary    string   `json:"summary"`
		Links      []string `json:"links"`
		OnceOthers int      `json:"onceOthers"`
	}
	read := func() screenState {
		var st screenState
		if err := json.Unmarshal([]byte(evalJS[string](t, ctx, state)), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	for _, lang := range []struct{ code, found, summary string }{
		{"en", "2 matching pages", "2 other captures of this page"},
		{"ja", "2 ページが一致しました", "このページの他の取得 2 件"},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/search?"+url.Values{"q": {"plum"}, "lang": {lang.code}}.Encode())); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, lang.code+" hits", `document.querySelectorAll("#hits li.hit").length === 2 && document.getElementById("found").textContent !== ""`, `document.getElementById("found").textContent`, 30*time.Second)
		if err := chromedp.Do(ctx, chromedp.Click(`#hits details.others summary`)); err != nil {
			t.Fatal(err)
		}
		st := read()
		if st.Found != lang.found {
			t.Errorf("%s: status %q, want %q", lang.code, st.Found, lang.found)
		}
		if len(st.Hits) != 2 || !strings.Contains(strings.Join(st.Hits, " "), newest) || !strings.Contains(strings.Join(st.Hits, " "), once) {
			t.Errorf("%s: hits %v, want the story's newest acme capture %s and %s, once each", lang.code, st.Hits, newest, once)
		}
		if st.Summary != lang.summary || st.OnceOthers != 1 {
			t.Errorf("%s: summary %q on %d hits, want %q on the story alone", lang.code, st.Summary, st.OnceOthers, lang.summary)
		}
		if len(st.Links) != 2 || !strings.HasPrefix(st.Links[0], "/archives/"+middle+" ") || !strings.HasPrefix(st.Links[1], "/archives/"+oldest+" ") ||
			strings.HasSuffix(st.Links[0], " ") || strings.HasSuffix(st.Links[1], " ") {
			t.Errorf("%s: other captures' links %q, want the middle %s then the oldest %s, each with its time", lang.code, st.Links, middle, oldest)
		}
		if open := evalJS[bool](t, ctx, `document.querySelector("#hits details.others").open`); !open {
			t.Errorf("%s: the other captures did not open", lang.code)
		}
		shot(t, ctx, "search-other-captures-"+lang.code+".png")
	}
	// The link opens the older capture's page.
	if err := chromedp.Do(ctx, chromedp.Click(`#hits details.others a[data-archive="`+oldest+`"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the oldest capture's page", `location.pathname === "/archives/`+oldest+`"`, `location.pathname`, 20*time.Second)
}
