package capture

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// memPayloads is a crawl payload index in memory, with the same contract
// as PostgreSQL's (first record of a digest stays); fail makes every call
// fail.
type memPayloads struct {
	mu         sync.Mutex
	rows       map[string]map[string]StoredPayload
	fail       error
	remembered int
}

func (m *memPayloads) StoredPayloads(_ context.Context, crawlID string, digests []string) (map[string]StoredPayload, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	out := map[string]StoredPayload{}
	for _, d := range digests {
		if p, ok := m.rows[crawlID][d]; ok {
			out[d] = p
		}
	}
	return out, nil
}

func (m *memPayloads) RememberPayloads(_ context.Context, crawlID string, stored []StoredPayload) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if m.rows == nil {
		m.rows = map[string]map[string]StoredPayload{}
	}
	if m.rows[crawlID] == nil {
		m.rows[crawlID] = map[string]StoredPayload{}
	}
	for _, p := range stored {
		if _, ok := m.rows[crawlID][p.Digest]; !ok {
			m.rows[crawlID][p.Digest] = p
			m.remembered++
		}
	}
	return nil
}

// sharedSite serves two pages linking a stylesheet and an image of more
// than MinRevisitPayload bytes, a small stylesheet, and a copy of the
// image under a second URL (on the second page only).
func sharedSite(t *testing.T) *httptest.Server {
	big := strings.Repeat("p { margin: 0; }\n", 200)
	img := testImage(t)
	mux := http.NewServeMux()
	serve := func(path, ct string, body []byte) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write(body)
		})
	}
	serve("/big.css", "text/css", []byte(big))
	serve("/small.css", "text/css", []byte("b { color: red; }"))
	serve("/logo.png", "image/png", img)
	serve("/copy.png", "image/png", img)
	page := func(name, extra string) []byte {
		return []byte(fmt.Sprintf(`<!doctype html><html><head><title>%s</title><link rel="stylesheet" href="/big.css"><link rel="stylesheet" href="/small.css"></head>
<body><p>%s %s</p><img src="/logo.png">%s</body></html>`, name, name, strings.Repeat("words ", 300), extra))
	}
	serve("/one", "text/html", page("one", ""))
	serve("/two", "text/html", page("two", `<img src="/copy.png">`))
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// testImage is a PNG of noise, larger than MinRevisitPayload.
func testImage(t *testing.T) []byte {
	var b bytes.Buffer
	for b.Len() < 3*MinRevisitPayload {
		b.WriteString(NewTaskID())
	}
	return append([]byte("\x89PNG\r\n\x1a\n"), b.Bytes()...)
}

// warcOf is the whole uncompressed WARC of the job's uploaded WACZ.
func warcOf(t *testing.T, out *Outcome) string {
	t.Helper()
	for _, o := range out.Objects {
		if strings.HasSuffix(o.Name, ".wacz") {
			if err := wacz.Verify(bytes.NewReader(o.Body), int64(len(o.Body))); err != nil {
				t.Fatalf("Verify %s: %v", o.Name, err)
			}
			entries := unzipAll(t, o.Body)
			return gunzipString(t, entries[wacz.WARCPath])
		}
	}
	t.Fatal("no WACZ uploaded")
	return ""
}

// TestRunDedupWithinACrawl: the second capture of a crawl writes the
// payloads the first one stored (the big stylesheet, the logo) as revisits
// naming the first WACZ, and the same image under another URL as a revisit
// of the logo; the page's own document and the small stylesheet are
// stored in full; a capture of another crawl, or without a crawl, shares
// nothing.
func TestRunDedupWithinACrawl(t *testing.T) {
	t.Parallel()
	s := sharedSite(t)
	e := NewHTTP(localConfig())
	defer e.Close()
	idx := &memPayloads{}
	crawl := NewTaskID()
	run := func(u, corr string) *Outcome {
		t.Helper()
		job := Job{TaskID: NewTaskID(), CorrelationID: corr, URL: u}
		out, err := RunWith(context.Background(), e, job, &Collect{Bucket: "b"}, Options{Software: "t", Payloads: idx})
		if err != nil || !out.OK() {
			t.Fatalf("run %s: %v %+v", u, err, out.Failure)
		}
		return out
	}
	first := run(s.URL+"/one", crawl)
	if first.Dedup.Revisits != 0 || strings.Contains(warcOf(t, first), "WARC-Type: revisit") {
		t.Fatalf("the crawl's first capture wrote revisits: %+v", first.Dedup)
	}
	if idx.remembered != 2 {
		t.Errorf("the first capture offered %d payloads, want 2 (the big stylesheet, the logo)", idx.remembered)
	}
	second := run(s.URL+"/two", crawl)
	w := warcOf(t, second)
	if second.Dedup.Revisits != 3 || second.Summary.Revisits != 3 {
		t.Fatalf("second capture: %+v, summary %d revisits; want 3", second.Dedup, second.Summary.Revisits)
	}
	firstWACZ := first.Job.WACZName()
	for _, want := range []string{
		"WARC-Target-URI: " + s.URL + "/big.css\r\nWARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r\nWARC-Refers-To-Target-URI: " + s.URL + "/big.css\r\n",
		"WARC-Target-URI: " + s.URL + "/logo.png\r\nWARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r\nWARC-Refers-To-Target-URI: " + s.URL + "/logo.png\r\n",
		"WARC-Target-URI: " + s.URL + "/copy.png\r\nWARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r\nWARC-Refers-To-Target-URI: " + s.URL + "/logo.png\r\n",
		"WARC-Refers-To-Container: " + firstWACZ + "\r\n",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("the second WARC lacks %q", want)
		}
	}
	for _, u := range []string{"/two", "/small.css"} {
		if !strings.Contains(w, "WARC-Type: response\r\nWARC-Record-ID: ") || !strings.Contains(w, "WARC-Target-URI: "+s.URL+u+"\r\n") {
			t.Errorf("%s is not stored", u)
		}
	}
	if n := strings.Count(w, "WARC-Type: revisit"); n != 3 {
		t.Errorf("%d revisit records", n)
	}
	if strings.Contains(w, strings.Repeat("p { margin: 0; }\n", 200)) {
		t.Error("the big stylesheet's body is stored again")
	}
	// Another crawl shares nothing with this one: only the copy of the
	// logo is a revisit, of the logo in the same WACZ. Without a crawl,
	// nothing is deduplicated.
	other := run(s.URL+"/two", NewTaskID())
	if w := warcOf(t, other); other.Dedup.Revisits != 1 || !strings.Contains(w, "WARC-Target-URI: "+s.URL+"/copy.png\r\nWARC-Profile: ") ||
		!strings.Contains(w, "WARC-Refers-To-Container: "+other.Job.WACZName()+"\r\n") || strings.Contains(w, firstWACZ) {
		t.Errorf("another crawl: %+v", other.Dedup)
	}
	if none := run(s.URL+"/two", ""); none.Dedup.Revisits != 0 || strings.Contains(warcOf(t, none), "WARC-Type: revisit") {
		t.Errorf("no crawl: %+v", none.Dedup)
	}
}

// failOn is an uploader whose puts of names ending in suffix fail.
type failOn struct {
	Collect
	suffix string
}

func (f *failOn) Put(ctx context.Context, name, ct string, body []byte) (string, error) {
	if strings.HasSuffix(name, f.suffix) {
		return "", errors.New("bucket said no")
	}
	return f.Collect.Put(ctx, name, ct, body)
}

// TestRunDedupOffersOnlyUploadedArchives: a capture whose WACZ, links or
// manifest upload failed offers none of its payloads (no later revisit can
// point at an archive that will not exist); an index that cannot be asked
// leaves every payload stored, and the capture succeeds.
func TestRunDedupOffersOnlyUploadedArchives(t *testing.T) {
	t.Parallel()
	s := sharedSite(t)
	e := NewHTTP(localConfig())
	defer e.Close()
	crawl := NewTaskID()
	for _, suffix := range []string{".wacz", ".links.json", ".result.json"} {
		idx := &memPayloads{}
		job := Job{TaskID: NewTaskID(), CorrelationID: crawl, URL: s.URL + "/one"}
		out, err := RunWith(context.Background(), e, job, &failOn{suffix: suffix}, Options{Payloads: idx})
		if err == nil && out.OK() {
			t.Fatalf("%s: the capture succeeded", suffix)
		}
		if idx.remembered != 0 {
			t.Errorf("upload of %s failed, yet %d payloads were offered", suffix, idx.remembered)
		}
	}
	idx := &memPayloads{}
	// The index knows the logo, then fails: nothing is a revisit.
	job := Job{TaskID: NewTaskID(), CorrelationID: crawl, URL: s.URL + "/one"}
	if _, err := RunWith(context.Background(), e, job, &Collect{}, Options{Payloads: idx}); err != nil {
		t.Fatal(err)
	}
	idx.fail = errors.New("database down")
	out, err := RunWith(context.Background(), e, Job{TaskID: NewTaskID(), CorrelationID: crawl, URL: s.URL + "/two"}, &Collect{}, Options{Payloads: idx})
	if err != nil || !out.OK() {
		t.Fatalf("with the index down: %v %+v", err, out.Failure)
	}
	if out.Dedup.Revisits != 0 || !strings.Contains(out.Dedup.Err, "database down") || strings.Contains(warcOf(t, out), "WARC-Type: revisit") {
		t.Errorf("with the index down: %+v", out.Dedup)
	}
}

// TestDedupSameURLSameInstant: a payload fetched again at the same URL in
// the same whole second as its original, with no milliseconds, would take
// the original's place in ReplayWeb.page's index (URL and time): it is
// stored again instead; a millisecond later it is a revisit.
func TestDedupSameURLSameInstant(t *testing.T) {
	t.Parallel()
	body := bytes.Repeat([]byte("x"), MinRevisitPayload)
	at := time.Date(2026, 12, 1, 10, 0, 5, 0, time.UTC)
	idx := &memPayloads{}
	crawl := NewTaskID()
	_ = idx.RememberPayloads(context.Background(), crawl, []StoredPayload{{Digest: payloadDigest(body), URL: "http://a.test/s.css", Date: at, Container: "x_y.wacz"}})
	for _, tc := range []struct {
		url     string
		date    time.Time
		revisit bool
	}{
		{"http://a.test/s.css", at, false},
		{"http://a.test/s.css", at.Add(time.Millisecond), true},
		{"http://a.test/other.css", at, true},
	} {
		c := wacz.Capture{Exchanges: []wacz.Exchange{{URL: tc.url, Status: 200, Date: tc.date, Body: body}}}
		_, st, err := dedup(context.Background(), idx, crawl, "z_y.wacz", &c)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Exchanges[0].Revisit != nil; got != tc.revisit || st.Revisits != map[bool]int{true: 1}[tc.revisit] {
			t.Errorf("%s at %s: revisit %v, want %v", tc.url, tc.date.Format(time.RFC3339Nano), got, tc.revisit)
		}
	}
}

func unzipAll(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	zr, err := zipReader(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = data
	}
	return out
}

func zipReader(b []byte) (*zip.Reader, error) {
	return zip.NewReader(bytes.NewReader(b), int64(len(b)))
}

// gunzipString reads every gzip member of b.
func gunzipString(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
