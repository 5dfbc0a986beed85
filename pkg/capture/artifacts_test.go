package capture

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/manifest"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

var waczOut = flag.String("wacz-out", "", "write the WACZ of each engine's capture of the test site into this directory (for ../shared/tools/wacz-check)")

func TestJobCheck(t *testing.T) {
	t.Parallel()
	ok := Job{TaskID: "2B9E63EC-4F1A-4C6E-9D2B-7A51C0E8F3D4", CorrelationID: "ab12cd34", URL: "https://example.com/", Labels: []string{"news", "日本語"}}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	if ok.TaskID != "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4" {
		t.Errorf("TaskID = %s, want lower case", ok.TaskID)
	}
	if ok.WACZName() != "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4_ab12cd34.wacz" || ok.LinksName() != "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4_ab12cd34.links.json" || ok.ManifestName() != "2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4_ab12cd34.result.json" {
		t.Errorf("names %s %s %s", ok.WACZName(), ok.LinksName(), ok.ManifestName())
	}
	if none := (Job{TaskID: ok.TaskID}); none.WACZName() != ok.TaskID+"_.wacz" {
		t.Errorf("without correlation id: %s", none.WACZName())
	}
	bad := []struct {
		job   Job
		field string
	}{
		{Job{TaskID: "not-a-uuid", URL: "https://e/"}, "taskId"},
		{Job{TaskID: "{2b9e63ec-4f1a-4c6e-9d2b-7a51c0e8f3d4}", URL: "https://e/"}, "taskId"},
		{Job{TaskID: ok.TaskID, CorrelationID: "a_b", URL: "https://e/"}, "correlationId"},
		{Job{TaskID: ok.TaskID, CorrelationID: "a/b", URL: "https://e/"}, "correlationId"},
		{Job{TaskID: ok.TaskID, CorrelationID: "a b", URL: "https://e/"}, "correlationId"},
		{Job{TaskID: ok.TaskID, CorrelationID: "a\x00", URL: "https://e/"}, "correlationId"},
		{Job{TaskID: ok.TaskID, CorrelationID: "\xff", URL: "https://e/"}, "correlationId"},
		{Job{TaskID: ok.TaskID, CorrelationID: strings.Repeat("x", 101), URL: "https://e/"}, "correlationId"},
		{Job{TaskID: ok.TaskID, Labels: []string{""}, URL: "https://e/"}, "labels[0]"},
		{Job{TaskID: ok.TaskID, URL: "ftp://e/"}, "url"},
	}
	for _, tt := range bad {
		err := tt.job.Check()
		var je *JobError
		if !errors.As(err, &je) || je.Field != tt.field {
			t.Errorf("Check(%+v) = %v, want a *JobError on %s", tt.job, err, tt.field)
		}
	}
}

// runJob captures path of s with e through Run into a Collect uploader.
func runJob(t *testing.T, e Engine, u string) (*Outcome, *Collect) {
	t.Helper()
	up := &Collect{Bucket: "ledger", Prefix: "captures/"}
	job := Job{TaskID: NewTaskID(), CorrelationID: NewCorrelationID(), URL: u, Labels: []string{"test"}}
	out, err := Run(context.Background(), e, job, up, "ledgerctl test")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out, up
}

func object(t *testing.T, up *Collect, name string) Object {
	t.Helper()
	for _, o := range up.Objects {
		if o.Name == name {
			return o
		}
	}
	t.Fatalf("no object %s among %d", name, len(up.Objects))
	return Object{}
}

func TestRunWritesBrowserHiveLayout(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	forEachEngine(t, "local", localConfig, func(t *testing.T, e Engine) {
		out, up := runJob(t, e, s.URL+"/")
		if !out.OK() || !out.Complete {
			t.Fatalf("Failure %v Complete %v", out.Failure, out.Complete)
		}
		job := out.Job
		var names []string
		for _, o := range up.Objects {
			names = append(names, o.Name)
		}
		// The WACZ and the links file go up together, in either order;
		// the manifest, which names them, last.
		if len(names) == 3 {
			slices.Sort(names[:2])
		}
		want := []string{job.WACZName(), job.LinksName(), job.ManifestName()}
		slices.Sort(want[:2])
		if strings.Join(names, " ") != strings.Join(want, " ") {
			t.Fatalf("objects %v, want %v", names, want)
		}
		w := object(t, up, job.WACZName())
		if w.ContentType != "application/wacz+zip" || w.Location != "s3://ledger/captures/"+job.WACZName() {
			t.Errorf("wacz object %s at %s", w.ContentType, w.Location)
		}

		// The project's structural check, and the page as search reads it.
		if err := wacz.Verify(bytes.NewReader(w.Body), int64(len(w.Body))); err != nil {
			t.Errorf("wacz.Verify: %v", err)
		}
		pages, _, err := wacz.ReadPages(bytes.NewReader(w.Body), int64(len(w.Body)))
		if err != nil || len(pages) != 1 {
			t.Fatalf("ReadPages = %v, %v", pages, err)
		}
		if pages[0].URL != s.URL+"/" || pages[0].Title != siteTitle || !strings.Contains(pages[0].Text, staticText) {
			t.Errorf("page = %+v", pages[0])
		}
		if want := e.Name() == EngineBrowser; strings.Contains(pages[0].Text, jsText) != want {
			t.Errorf("pages.jsonl text has the script's text: %v, want %v", !want, want)
		}

		// The manifest reads as pkg/manifest reads BrowserHive's.
		mo := object(t, up, job.ManifestName())
		if bytes.HasSuffix(mo.Body, []byte("\n")) || !bytes.Contains(mo.Body, []byte("\n  \"taskId\": ")) {
			t.Errorf("manifest is not 2-space JSON without a trailing newline:\n%s", mo.Body)
		}
		m, err := manifest.Decode(mo.Body)
		if err != nil {
			t.Fatalf("manifest.Decode: %v\n%s", err, mo.Body)
		}
		if m.TaskID != job.TaskID || m.CorrelationID == nil || *m.CorrelationID != job.CorrelationID || m.URL != s.URL+"/" ||
			m.Status != manifest.StatusSuccess || m.HTTPStatusCode == nil || *m.HTTPStatusCode != 200 || m.Error != nil {
			t.Errorf("manifest = %+v", m)
		}
		if m.Artifacts.WACZ != w.Location || m.Artifacts.Links != "s3://ledger/captures/"+job.LinksName() {
			t.Errorf("artifacts = %+v", m.Artifacts)
		}
		row, err := m.Archive("ledger")
		if err != nil {
			t.Fatalf("Archive: %v", err)
		}
		if row.ObjectKey != "captures/"+job.WACZName() || row.WaczComplete == nil || !*row.WaczComplete || row.Labels[0] != "test" {
			t.Errorf("row = %+v", row)
		}
		for _, key := range []string{`"captureProcessingTimeMs": `, `"waczStats": {`, `"totalRecorded": `, `"truncatedUrls": []`, `"document": {`} {
			if !bytes.Contains(mo.Body, []byte(key)) {
				t.Errorf("manifest lacks %s", key)
			}
		}

		// The links file as the crawl reads it.
		lo := object(t, up, job.LinksName())
		links, err := manifest.DecodeLinks(lo.Body)
		if err != nil {
			t.Fatal(err)
		}
		if len(links) != 3 || links[0].Href != s.URL+"/ja" || links[0].Rel != nil || links[2].Rel == nil || *links[2].Rel != "nofollow noreferrer" {
			t.Errorf("links = %+v", links)
		}
		for _, key := range []string{`"finalUrl": "` + s.URL + `/"`, `"rel": null`, `"capturedAt": "`} {
			if !bytes.Contains(lo.Body, []byte(key)) {
				t.Errorf("links file lacks %s:\n%s", key, lo.Body)
			}
		}

		if *waczOut != "" {
			save := func(name string, body []byte) {
				p := filepath.Join(*waczOut, name)
				if err := os.WriteFile(p, body, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s (%d bytes)", p, len(body))
			}
			save(e.Name()+".wacz", w.Body)
			for _, p := range []string{"/ja", "/redirect"} {
				out, up := runJob(t, e, s.URL+p)
				if !out.OK() {
					t.Fatalf("%s: %v", p, out.Failure)
				}
				save(e.Name()+"-"+strings.TrimPrefix(p, "/")+".wacz", object(t, up, out.Job.WACZName()).Body)
			}
		}
	})
}

func TestRunFailedCaptureHasManifestOnly(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	tests := []struct {
		path       string
		status     manifest.Status
		errType    manifest.ErrorType
		httpStatus int
	}{
		{"/no-such-page", manifest.StatusHTTPError, manifest.ErrorTypeHTTP, 404},
		{"/status/429", manifest.StatusHTTPError, manifest.ErrorTypeHTTP, 429},
	}
	e := NewHTTP(localConfig())
	for _, tt := range tests {
		out, up := runJob(t, e, s.URL+tt.path)
		if out.OK() || len(up.Objects) != 1 || up.Objects[0].Name != out.Job.ManifestName() {
			t.Fatalf("%s: OK %v, objects %d", tt.path, out.OK(), len(up.Objects))
		}
		m, err := manifest.Decode(up.Objects[0].Body)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != tt.status || m.Error == nil || m.Error.Type != tt.errType || m.HTTPStatusCode == nil || *m.HTTPStatusCode != tt.httpStatus {
			t.Errorf("%s: manifest %+v error %+v", tt.path, m, m.Error)
		}
		if _, err := m.Archive("ledger"); !errors.Is(err, manifest.ErrNoArchive) {
			t.Errorf("%s: Archive = %v, want no archive", tt.path, err)
		}
	}

	// Refused: BrowserHive's "url is not allowed" is an internal failure
	// at the address check.
	out, up := runJob(t, NewHTTP(Defaults()), s.URL+"/")
	m, err := manifest.Decode(up.Objects[0].Body)
	if err != nil || out.OK() || len(up.Objects) != 1 {
		t.Fatalf("refused: %v, %d objects", err, len(up.Objects))
	}
	if m.Status != manifest.StatusFailed || m.Error.Type != manifest.ErrorTypeInternal || m.Error.Step != "check-address" || !strings.Contains(m.Error.Message, "loopback") {
		t.Errorf("refused manifest %+v %+v", m, m.Error)
	}
	if s.total() != 2 { // the two captures above, nothing from this one
		t.Errorf("site got %d requests", s.total())
	}

	// A bad job writes nothing.
	up = &Collect{Bucket: "ledger"}
	if _, err := Run(context.Background(), e, Job{TaskID: "x", URL: s.URL}, up, "t"); err == nil || len(up.Objects) != 0 {
		t.Errorf("bad job: %v, %d objects", err, len(up.Objects))
	}
}

func TestRunIncompleteCapture(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	c := localConfig()
	c.MaxBodyBytes = 1 << 10
	out, up := runJob(t, NewHTTP(c), s.URL+"/big")
	if !out.OK() || out.Complete {
		t.Fatalf("OK %v Complete %v", out.OK(), out.Complete)
	}
	m, err := manifest.Decode(object(t, up, out.Job.ManifestName()).Body)
	if err != nil {
		t.Fatal(err)
	}
	if m.WaczComplete == nil || *m.WaczComplete {
		t.Errorf("completeness.complete = %v, want false", m.WaczComplete)
	}
	if !bytes.Contains(object(t, up, out.Job.ManifestName()).Body, []byte(`"truncatedUrls": [
      "`+s.URL+`/big.bin"
    ]`)) {
		t.Errorf("truncatedUrls does not list big.bin:\n%s", object(t, up, out.Job.ManifestName()).Body)
	}
	w := object(t, up, out.Job.WACZName())
	if err := wacz.Verify(bytes.NewReader(w.Body), int64(len(w.Body))); err != nil {
		t.Errorf("wacz.Verify: %v", err)
	}
}

type failingUploader struct{ failOn string }

func (f failingUploader) Put(_ context.Context, name, _ string, _ []byte) (string, error) {
	if strings.HasSuffix(name, f.failOn) {
		return "", errors.New("bucket said no")
	}
	return "s3://ledger/" + name, nil
}

func TestRunUploadFailure(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	e := NewHTTP(localConfig())
	job := Job{TaskID: NewTaskID(), URL: s.URL + "/"}
	out, err := Run(context.Background(), e, job, failingUploader{failOn: ".wacz"}, "t")
	if err != nil {
		t.Fatal(err)
	}
	if out.OK() || out.Failure.Kind != FailArtifactSink || out.ManifestLocation == "" {
		t.Fatalf("outcome %+v", out)
	}
	m, err := manifest.Decode(out.Objects[len(out.Objects)-1].Body)
	if err != nil || m.Status != manifest.StatusFailed || m.Error.Type != manifest.ErrorTypeArtifactSink || m.Error.Step != "upload-wacz" || m.Artifacts.WACZ != "" {
		t.Errorf("manifest %+v, %v", m, err)
	}
	// The links file fails while the WACZ, put at the same time, lands.
	out, err = Run(context.Background(), e, job, failingUploader{failOn: ".links.json"}, "t")
	if err != nil || out.OK() || out.Failure.Kind != FailArtifactSink {
		t.Fatalf("links upload failure: outcome %+v, %v", out, err)
	}
	m, err = manifest.Decode(out.Objects[len(out.Objects)-1].Body)
	if err != nil || m.Status != manifest.StatusFailed || m.Error.Step != "write-formats" || m.Artifacts.Links != "" {
		t.Errorf("manifest after a failed links upload %+v, %v", m, err)
	}
	_, err = Run(context.Background(), e, job, failingUploader{failOn: ".result.json"}, "t")
	if err == nil || !strings.Contains(err.Error(), "bucket said no") {
		t.Errorf("a failed manifest upload = %v, want the error", err)
	}
}

// A job whose links will not be followed (a crawl's last level) writes no
// links file, and its manifest names none; the WACZ and the manifest are
// as always.
func TestRunWithoutLinksFile(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	e := NewHTTP(localConfig())
	t.Cleanup(func() { _ = e.Close() })
	up := &Collect{Bucket: "ledger", Prefix: "captures/"}
	job := Job{TaskID: NewTaskID(), CorrelationID: NewCorrelationID(), URL: s.URL + "/"}
	out, err := RunWith(context.Background(), e, job, up, Options{Software: "ledgerctl test", NoLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	if !out.OK() || !out.Complete {
		t.Fatalf("Failure %v Complete %v", out.Failure, out.Complete)
	}
	var names []string
	for _, o := range up.Objects {
		names = append(names, o.Name)
	}
	if want := job.WACZName() + " " + job.ManifestName(); strings.Join(names, " ") != want {
		t.Fatalf("objects %v, want %s", names, want)
	}
	m, err := manifest.Decode(object(t, up, job.ManifestName()).Body)
	if err != nil {
		t.Fatal(err)
	}
	if m.Artifacts.Links != "" || out.Artifacts.Links != "" || m.Artifacts.WACZ != "s3://ledger/captures/"+job.WACZName() {
		t.Errorf("artifacts = %+v (outcome %+v)", m.Artifacts, out.Artifacts)
	}
	if len(out.Result.Links) == 0 {
		t.Error("the outcome lost the page's links")
	}
}
