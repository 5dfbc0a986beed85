package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// TestReplayReadsBounded: the object reads in flight are shared capacity
// (an S3 stream and a buffer each, for as long as the reader takes). A
// person's script that opens reads and never takes the bytes holds at most
// its own bound, its organization's people together theirs: past either,
// a read is 429 with Retry-After, before S3 is asked (the server's bound,
// 503, is the same gate's: pkg/visible). A place comes back when its read
// ends.
func TestReplayReadsBounded(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t, replayOptions{objectSize: 8 << 20, reads: replay.ReadBounds{PerCaller: 1, PerOrg: 2, Total: 3}})
	id := f.ids[0]
	// hold starts a read of the whole object as subject of orgs and keeps
	// it open without taking its bytes; it returns how to end it.
	hold := func(subject, orgs string) func() {
		t.Helper()
		_, tok := f.link(t, id, subject, orgs, "")
		u := f.reads(t, tok)(id, tok)
		req, _ := http.NewRequest("GET", f.srv.URL+strings.TrimPrefix(u, f.origins.Origin(labelOf(t, tok))), nil)
		req.Host = strings.TrimPrefix(f.origins.Origin(labelOf(t, tok)), "http://")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		// Ended before the server is closed (cleanups run last first):
		// its handler waits for the reader.
		t.Cleanup(func() { res.Body.Close() })
		if res.StatusCode != 200 {
			b, _ := io.ReadAll(res.Body)
			t.Fatalf("%s's read: %d %s", subject, res.StatusCode, b)
		}
		return func() { res.Body.Close() }
	}
	read := func(subject, orgs string) answer {
		t.Helper()
		_, tok := f.link(t, id, subject, orgs, "")
		return f.do(t, "GET", f.reads(t, tok)(id, tok), map[string]string{"Range": "bytes=0-99"}, "")
	}
	endCarol := hold("carol", "acme")
	if a := read("carol", "acme"); a.status != 429 || a.header.Get("Retry-After") != "1" ||
		string(a.body) != `{"error":"too many of your replay reads are running at once (limit 1); retry after 1 s"}`+"\n" {
		t.Errorf("carol's second read: %d Retry-After=%q %s", a.status, a.header.Get("Retry-After"), a.body)
	}
	endDave := hold("dave", "acme")
	if a := read("erin", "acme"); a.status != 429 || a.header.Get("Retry-After") != "1" ||
		string(a.body) != `{"error":"too many replay reads of organization acme are running at once (limit 2); retry after 1 s"}`+"\n" {
		t.Errorf("a third person of acme: %d Retry-After=%q %s", a.status, a.header.Get("Retry-After"), a.body)
	}
	if a := read("alice", "contoso,acme"); a.status != 429 {
		t.Errorf("a person of acme and contoso: %d %s, want acme's bound", a.status, a.body)
	}
	endDave()
	// Dave's place comes back once his read ends (the server notices the
	// closed connection when it next writes).
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := read("erin", "acme")
		if a.status == 206 {
			break
		}
		if a.status != 429 || time.Now().After(deadline) {
			t.Fatalf("erin after dave's read ended: %d %s", a.status, a.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	endCarol()
}
