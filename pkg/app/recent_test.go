package app_test

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// TestIndexerReadsWhatThisProcessJustWrote: a WACZ the process put to S3
// moments ago (a capture it made) is indexed from memory, not read back
// from S3: here its object is removed from the bucket behind the
// process's back before the pass, and the pass still indexes its page.
// An archive the process did not write is read from S3 as before (its
// missing object fails the pass for it).
func TestIndexerReadsWhatThisProcessJustWrote(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	ctx := context.Background()
	s := env.App.Settings
	s.SearchDir = filepath.Join(t.TempDir(), "index")
	a := app.New(s, nil)
	a.SetAuthz(env.FGA)
	t.Cleanup(a.Close)
	st, err := a.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	put := func(word string, byThisProcess bool) string {
		now := time.Now().UTC()
		c := wacz.Capture{Created: now, Software: "ledgerctl test",
			Pages: []wacz.Page{{URL: "https://example.com/" + word, Date: now, Title: word, Text: "the word " + word}},
			Exchanges: []wacz.Exchange{{URL: "https://example.com/" + word, Date: now, Status: 200,
				Header: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<title>" + word + "</title>the word " + word)}}}
		var buf bytes.Buffer
		if _, err := wacz.Write(&buf, c); err != nil {
			t.Fatal(err)
		}
		task := uuid.NewString()
		key := "org/acme/" + task + ".wacz"
		client := env.Blob
		if byThisProcess {
			client = a.Blob()
		}
		if err := client.Put(ctx, env.Bucket, key, "application/wacz+zip", buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.InsertArchive(ctx, ledger.NewArchive{TaskID: task, Bucket: env.Bucket, ObjectKey: key,
			SourceURL: "https://example.com/" + word, CapturedAt: now},
			func(id string) ledger.OutboxPayload { return ledger.AdmissionTuples(id, task, "acme", nil) }); err != nil {
			t.Fatal(err)
		}
		// Gone from the bucket, by another client.
		if err := env.Blob.Delete(ctx, env.Bucket, key); err != nil {
			t.Fatal(err)
		}
		return key
	}
	mine := put("medlar", true)
	theirs := put("loquat", false)
	ix, err := a.Indexer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix.IndexPending(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Indexed != 1 || res.Pages != 1 || res.Failed != 1 || len(res.Failures) != 1 {
		t.Fatalf("the pass: %+v; want this process's WACZ indexed (1 page) and the other one failed", res)
	}
	if f := res.Failures[0]; !bytes.Contains([]byte(f.Reason), []byte(theirs)) {
		t.Errorf("the failure names %q, want the WACZ this process did not write (%s); this process's was %s", f.Reason, theirs, mine)
	}
}
