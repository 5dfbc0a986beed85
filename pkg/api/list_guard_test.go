package api_test

// The archive list's guard (docs/security.md), each test written as the
// attack it stops, over HTTP against the real stack (PostgreSQL, versitygw,
// embedded OpenFGA): a cursor that names another organization's row, a
// forged or borrowed cursor, a crowd of callers who see nothing keeping the
// server busy. Every attack leaves the database as it found it.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// listRow is one seeded archive.
type listRow = apptest.Seeded

// seedList is apptest.SeedArchives.
func seedList(t *testing.T, env *apptest.Env, n int, orgOf func(i int) string) []listRow {
	t.Helper()
	return apptest.SeedArchives(t, env, n, orgOf)
}

// listServer serves the API over loopback with access (dev headers).
func listServer(t *testing.T, env *apptest.Env, access *archive.Access) string {
	t.Helper()
	store, err := env.App.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if access.Perms == nil {
		access.Perms = app.Permissions{Client: env.FGA}
	}
	access.Catalog, access.Signer = store, env.App.Blob()
	// The guards bound the full scan, where a sparse caller is expensive:
	// the candidate list gives such a caller little to ask about
	// (TestCandidateListEqualsFullScan in pkg/archive).
	access.Source = archive.SourceScan
	return serve(t, &api.Server{Access: access, Identity: identity.Headers{}, Submitters: app.Permissions{Client: env.FGA}}).URL
}

type listAnswer struct {
	status int
	header http.Header
	body   string
	page   api.ArchivePage
}

func getList(t *testing.T, base, query, subject, orgs string) listAnswer {
	t.Helper()
	got := send(t, "GET", base+"/api/archives"+query, subject, orgs, "")
	a := listAnswer{status: got.status, header: got.header, body: strings.TrimSpace(string(got.body))}
	if a.status == 200 {
		if err := json.Unmarshal(got.body, &a.page); err != nil {
			t.Fatalf("list body %q: %v", got.body, err)
		}
	}
	return a
}

// consoleQuery is the query the console's archives screen builds from a
// page's next to load more (pkg/web/assets/archives.js).
func consoleQuery(next *api.CursorJSON) string {
	return "?before=" + url.QueryEscape(next.Before) + "&beforeId=" + url.QueryEscape(next.BeforeID)
}

// leak says where text (a response body or a token) shows one of rows' ids
// or exact timestamps in any encoding we can think of — as text, or in the
// bytes of any base64 or hex reading of it or of its parts — or "" if none.
// Timestamps in shown (UnixNano) are skipped: the caller sees a row there.
func leak(text string, rows []listRow, shown map[int64]bool) string {
	blobs := [][]byte{[]byte(text)}
	parts := []string{text}
	for _, sep := range []string{".", "_", "-", ":", "\""} {
		parts = append(parts, strings.Split(text, sep)...)
	}
	for _, p := range parts {
		for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.StdEncoding} {
			if b, err := enc.DecodeString(p); err == nil && len(b) > 0 {
				blobs = append(blobs, b)
			}
		}
		if b, err := hex.DecodeString(p); err == nil && len(b) > 0 {
			blobs = append(blobs, b)
		}
	}
	for _, r := range rows {
		u := uuid.MustParse(r.ID)
		needles := map[string][]byte{
			"id":                 []byte(r.ID),
			"id upper-case":      []byte(strings.ToUpper(r.ID)),
			"id without dashes":  []byte(hex.EncodeToString(u[:])),
			"id bytes":           u[:],
			"timestamp RFC 3339": []byte(r.At.UTC().Format(time.RFC3339Nano)),
			"timestamp (µs)":     []byte(r.At.UTC().Format("2006-01-02 15:04:05.999999")),
			"unix seconds":       []byte(strconv.FormatInt(r.At.Unix(), 10)),
			"unix ms":            []byte(strconv.FormatInt(r.At.UnixMilli(), 10)),
			"unix µs":            []byte(strconv.FormatInt(r.At.UnixMicro(), 10)),
			"unix ns":            []byte(strconv.FormatInt(r.At.UnixNano(), 10)),
		}
		for name, v := range map[string]int64{"seconds": r.At.Unix(), "ms": r.At.UnixMilli(), "µs": r.At.UnixMicro(), "ns": r.At.UnixNano()} {
			needles["unix "+name+" as 8 bytes big-endian"] = binary.BigEndian.AppendUint64(nil, uint64(v))
			needles["unix "+name+" as 8 bytes little-endian"] = binary.LittleEndian.AppendUint64(nil, uint64(v))
		}
		if shown[r.At.UnixNano()] {
			needles = map[string][]byte{"id": needles["id"], "id upper-case": needles["id upper-case"], "id without dashes": needles["id without dashes"], "id bytes": needles["id bytes"]}
		}
		for _, b := range blobs {
			for name, n := range needles {
				if bytes.Contains(b, n) {
					return fmt.Sprintf("%s of hidden archive %s (%s) in %q", name, r.ID, r.At.Format(time.RFC3339Nano), text)
				}
			}
		}
	}
	return ""
}

// TestArchiveListCursorRevealsNoHiddenRow is the cursor attack:
// another organization's archives exist, a caller who sees none of them
// lists, and reads the `next` cursor for the ids and timestamps of rows it
// may not see; then it edits the cursor, borrows another caller's, and makes
// one up. The cursor reveals nothing, every forged one is a 400 saying so,
// and nothing is written.
func TestArchiveListCursorRevealsNoHiddenRow(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	rows := seedList(t, env, 300, func(int) string { return "contoso" })
	// A check budget well under the rows, so the scan stops at a row the
	// caller may not see: the position the old cursor named in clear.
	// The detector finds the old clear cursor, and the same in base64.
	old := rows[42]
	u := uuid.MustParse(old.ID)
	for _, clear := range []string{
		fmt.Sprintf(`{"next":{"before":%q,"beforeId":%q}}`, old.At.Format(time.RFC3339Nano), old.ID),
		base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(u[:], uint64(old.At.UnixMicro()))),
	} {
		if leak(clear, rows, nil) == "" {
			t.Fatalf("leak sees nothing in %s", clear)
		}
	}
	base := listServer(t, env, &archive.Access{ScanLimit: 120, TimeBudget: time.Minute})
	before := testenv.TakeSnapshot(t, env.DSN)

	first := getList(t, base, "", "carol", "nobody")
	if first.status != 200 || len(first.page.Archives) != 0 || !first.page.Truncated || first.page.Next == nil {
		t.Fatalf("first page: %d %s (want 200, no archive, truncated, a next cursor)", first.status, first.body)
	}
	token := first.page.Next.Before
	if !strings.HasPrefix(token, archive.CursorTokenPrefix) || first.page.Next.BeforeID != "" {
		t.Errorf("next = %+v: want an opaque token in before and beforeId empty", first.page.Next)
	}
	if l := leak(first.body, rows, nil); l != "" {
		t.Errorf("the first page reveals the %s", l)
	}

	// Following the cursors (as the console sends them) walks the whole
	// ledger: every page empty, no cursor revealing anything, and an end.
	next, pages := first.page.Next, 1
	for next != nil {
		a := getList(t, base, consoleQuery(next), "carol", "nobody")
		if a.status != 200 || len(a.page.Archives) != 0 {
			t.Fatalf("page %d: %d %s", pages+1, a.status, a.body)
		}
		if l := leak(a.body, rows, nil); l != "" {
			t.Errorf("page %d reveals the %s", pages+1, l)
		}
		if next, pages = a.page.Next, pages+1; pages > 10 {
			t.Fatal("the cursors never reach the end")
		}
	}
	if pages != 3 {
		t.Errorf("%d pages for 300 rows at 120 checks each, want 3", pages)
	}

	badCursor := `{"code":"FST_ERR_VALIDATION","error":"Bad Request","message":"querystring/before is not a cursor this server handed to you (changed, cut short, or another caller's): start again without it","statusCode":400}`
	edited := []byte(token)
	edited[len(archive.CursorTokenPrefix)+20] ^= 'A' ^ 'B' // stays base64
	if edited[len(archive.CursorTokenPrefix)+20] == token[len(archive.CursorTokenPrefix)+20] {
		t.Fatal("the edit changed nothing")
	}
	for _, tc := range []struct {
		name, query, subject, orgs string
	}{
		{"one character changed", "?before=" + url.QueryEscape(string(edited)), "carol", "nobody"},
		{"cut short", "?before=" + url.QueryEscape(token[:len(token)-4]), "carol", "nobody"},
		{"another caller's", "?before=" + url.QueryEscape(token), "dave", "nobody"},
		{"the same caller in another organization", "?before=" + url.QueryEscape(token), "carol", "contoso"},
		{"the same caller with an organization more", "?before=" + url.QueryEscape(token), "carol", "nobody,contoso"},
		{"made up", "?before=c1." + strings.Repeat("A", len(token)-3), "carol", "nobody"},
		{"malformed, before anyone is identified", "?before=c1.%21%21", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := getList(t, base, tc.query, tc.subject, tc.orgs)
			if a.status != 400 || a.body != badCursor {
				t.Errorf("%d %s, want 400 %s", a.status, a.body, badCursor)
			}
		})
	}
	if a := getList(t, base, "?before="+url.QueryEscape(token)+"&beforeId="+rows[0].ID, "carol", "nobody"); a.status != 400 || !strings.Contains(a.body, "beforeId must be empty") {
		t.Errorf("token with a beforeId: %d %s", a.status, a.body)
	}
	// A time the caller chose still works (it reveals nothing): from just
	// before the newest contoso row, carol still sees nothing.
	if a := getList(t, base, "?before="+url.QueryEscape(rows[0].At.Format(time.RFC3339Nano)), "carol", "nobody"); a.status != 200 || len(a.page.Archives) != 0 {
		t.Errorf("a caller-chosen before: %d %s", a.status, a.body)
	}
	testenv.Unchanged(t, env.DSN, before)
}

// TestArchiveListBudgetResumesExactlyOnce: a sparse caller's scan is cut by
// the time budget or the check budget, not left to run; each cut page says
// truncated and carries an opaque cursor, and following the cursors lists
// every visible row exactly once, in order, revealing no hidden one.
func TestArchiveListBudgetResumesExactlyOnce(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	rows := seedList(t, env, 600, func(i int) string {
		if i%7 == 0 {
			return "acme"
		}
		return "contoso"
	})
	var visible, hidden []listRow
	shown := map[int64]bool{}
	for _, r := range rows {
		if r.Org == "acme" {
			visible = append(visible, r)
			shown[r.At.UnixNano()] = true
		} else {
			hidden = append(hidden, r)
		}
	}
	before := testenv.TakeSnapshot(t, env.DSN)
	for _, tc := range []struct {
		name   string
		access *archive.Access
	}{
		// 1 ns: every request stops after its first chunk of checks.
		{"time budget", &archive.Access{TimeBudget: time.Nanosecond}},
		{"check budget", &archive.Access{ScanLimit: 60, TimeBudget: time.Minute}},
		// Behind the default gate: checks go a few at a time through its lane.
		{"check budget behind the gate", &archive.Access{ScanLimit: 60, TimeBudget: time.Minute, Gate: archive.NewScanGate(archive.GateBounds{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := listServer(t, env, tc.access)
			var got []string
			seen := map[string]bool{}
			truncated, query := 0, ""
			for pages := 1; ; pages++ {
				a := getList(t, base, query, "bob", "acme")
				if a.status != 200 {
					t.Fatalf("page %d: %d %s", pages, a.status, a.body)
				}
				if l := leak(a.body, hidden, shown); l != "" {
					t.Errorf("page %d reveals the %s", pages, l)
				}
				for _, ar := range a.page.Archives {
					if seen[ar.ID] {
						t.Errorf("page %d lists %s again", pages, ar.ID)
					}
					seen[ar.ID] = true
					got = append(got, ar.ID)
				}
				if a.page.Truncated {
					truncated++
					if a.page.Next == nil {
						t.Fatalf("page %d is truncated without a cursor", pages)
					}
				} else if a.page.Next != nil && len(a.page.Archives) != 50 {
					t.Errorf("page %d: %d rows, not truncated and not the last", pages, len(a.page.Archives))
				}
				if a.page.Next == nil {
					break
				}
				if pages > 100 {
					t.Fatal("the cursors never reach the end")
				}
				query = consoleQuery(a.page.Next)
			}
			if truncated == 0 {
				t.Error("no page was cut by the budget")
			}
			if len(got) != len(visible) {
				t.Fatalf("listed %d archives, want the %d visible ones", len(got), len(visible))
			}
			for i, r := range visible {
				if got[i] != r.ID {
					t.Fatalf("row %d: %s, want %s (order, or a skipped or repeated row)", i, got[i], r.ID)
				}
			}
		})
	}
	testenv.Unchanged(t, env.DSN, before)
}

// pausingPerms asks the real OpenFGA, but first holds every batch of checks
// until release is closed, so a test can keep lists running.
type pausingPerms struct {
	archive.Permissions
	entered chan string
	release chan struct{}
}

func (p *pausingPerms) CanViewMany(ctx context.Context, subject string, orgs []string, ids []string) ([]bool, error) {
	select {
	case p.entered <- subject:
	default:
	}
	select {
	case <-p.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p.Permissions.CanViewMany(ctx, subject, orgs, ids)
}

// TestArchiveListConcurrencyBound: callers who see nothing start more lists
// than the server runs at once. Past the caller's bound or its
// organization's, a list is refused at once with 429 and Retry-After; past
// the server's, with 503, Retry-After and a body saying the server is busy;
// each before any check. Minting is not held up meanwhile; the lists that
// were admitted finish; and nothing is written.
func TestArchiveListConcurrencyBound(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	rows := seedList(t, env, 120, func(i int) string {
		if i == 0 {
			return "acme"
		}
		return "contoso"
	})
	perms := &pausingPerms{Permissions: app.Permissions{Client: env.FGA}, entered: make(chan string, 16), release: make(chan struct{})}
	gate := archive.NewScanGate(archive.GateBounds{Lists: 2, PerCaller: 1, PerOrg: 1})
	base := listServer(t, env, &archive.Access{Perms: perms, TimeBudget: 3 * time.Second, Gate: gate})
	before := testenv.TakeSnapshot(t, env.DSN)

	type result struct {
		who string
		a   listAnswer
	}
	done := make(chan result, 2)
	// start sends a list and returns once it holds a place in the gate.
	start := func(subject, org string) {
		holding := gate.Running()
		go func() {
			req, _ := http.NewRequest("GET", base+"/api/archives", nil)
			req.Header.Set(identity.SubjectHeader, subject)
			req.Header.Set(identity.OrganizationsHeader, org)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- result{subject, listAnswer{status: -1, body: err.Error()}}
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			done <- result{subject, listAnswer{status: res.StatusCode, body: string(b)}}
		}()
		for deadline := time.Now().Add(30 * time.Second); gate.Running() == holding; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s's list never entered the gate", subject)
			}
		}
	}
	start("mallory", "nobody")
	// Her first chunk of checks is in OpenFGA (held there), in the lane.
	select {
	case s := <-perms.entered:
		if s != "mallory" {
			t.Fatalf("%s is checking", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("mallory's list never asked OpenFGA")
	}
	callerBusy := `{"error":"too many of your archive lists are running at once (limit 1); retry after 3 s"}`
	if a := getList(t, base, "", "mallory", "nobody"); a.status != 429 || a.header.Get("Retry-After") != "3" || a.body != callerBusy {
		t.Errorf("a second list of one caller: %d Retry-After=%q %s, want 429 Retry-After=3 %s", a.status, a.header.Get("Retry-After"), a.body, callerBusy)
	}
	orgBusy := `{"error":"too many archive lists of organization nobody are running at once (limit 1); retry after 3 s"}`
	if a := getList(t, base, "", "eve", "nobody"); a.status != 429 || a.header.Get("Retry-After") != "3" || a.body != orgBusy {
		t.Errorf("a second list of one organization: %d Retry-After=%q %s, want 429 Retry-After=3 %s", a.status, a.header.Get("Retry-After"), a.body, orgBusy)
	}
	start("oscar", "other") // admitted, waiting for the check lane behind mallory
	serverBusy := `{"error":"server busy: too many archive lists are running at once (limit 2); retry after 3 s"}`
	for _, who := range []string{"trudy", "bob"} {
		if a := getList(t, base, "", who, "acme"); a.status != 503 || a.header.Get("Retry-After") != "3" || a.body != serverBusy {
			t.Errorf("%s past the server's bound: %d Retry-After=%q %s, want 503 %s", who, a.status, a.header.Get("Retry-After"), a.body, serverBusy)
		}
	}
	select {
	case s := <-perms.entered:
		t.Errorf("a refused list (%s) asked OpenFGA", s)
	default:
	}
	// Minting does not pass the list's gate.
	req, _ := http.NewRequest("POST", base+"/api/archives/"+rows[len(rows)-1].ID+"/url", nil)
	req.Header.Set(identity.SubjectHeader, "bob")
	req.Header.Set(identity.OrganizationsHeader, "acme")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Errorf("mint while the lists are full: %v %v", res, err)
	} else {
		res.Body.Close()
	}

	close(perms.release)
	for range 2 {
		r := <-done
		if r.a.status != 200 || !strings.Contains(r.a.body, `"archives":[]`) {
			t.Errorf("%s's admitted list: %d %s", r.who, r.a.status, r.a.body)
		}
	}
	// Places are given back: the refused callers list now.
	if a := getList(t, base, "", "bob", "acme"); a.status != 200 || len(a.page.Archives) != 1 || a.page.Archives[0].ID != rows[len(rows)-1].ID {
		t.Errorf("bob after the lists ended: %d %s", a.status, a.body)
	}
	if a := getList(t, base, "", "mallory", "nobody"); a.status != 200 {
		t.Errorf("mallory after her list ended: %d %s", a.status, a.body)
	}
	testenv.Unchanged(t, env.DSN, before)
}
