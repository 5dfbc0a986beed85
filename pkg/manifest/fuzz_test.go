package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// addFixtures seeds f with every testdata file whose name ends in suffix.
func addFixtures(f *testing.F, suffix string) {
	f.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "*"+suffix))
	if err != nil || len(names) == 0 {
		f.Fatalf("no fixtures *%s: %v", suffix, err)
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

var knownStatuses = map[Status]bool{StatusSuccess: true, StatusFailed: true, StatusTimeout: true, StatusHTTPError: true}

// encodeManifest writes m back as a v12-style manifest, for round trips.
func encodeManifest(t *testing.T, m Manifest) []byte {
	doc := map[string]any{
		"taskId":    m.TaskID,
		"url":       m.URL,
		"labels":    m.Labels,
		"status":    string(m.Status),
		"timestamp": m.Timestamp.Format(time.RFC3339Nano),
	}
	if m.CorrelationID != nil {
		doc["correlationId"] = *m.CorrelationID
	}
	if m.HTTPStatusCode != nil {
		doc["httpStatusCode"] = *m.HTTPStatusCode
	}
	arts := map[string]string{}
	for k, v := range map[string]string{"png": m.Artifacts.PNG, "webp": m.Artifacts.WebP, "html": m.Artifacts.HTML,
		"links": m.Artifacts.Links, "mhtml": m.Artifacts.MHTML, "wacz": m.Artifacts.WACZ} {
		if v != "" {
			arts[k] = v
		}
	}
	doc["artifacts"] = arts
	if m.WaczComplete != nil {
		doc["completeness"] = map[string]any{"complete": *m.WaczComplete}
	}
	if m.Signed != nil {
		doc["signature"] = map[string]any{"signed": *m.Signed}
	}
	if m.Error != nil {
		doc["errorDetails"] = map[string]any{"type": string(m.Error.Type), "message": m.Error.Message, "step": m.Error.Step}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("re-encoding %+v: %v", m, err)
	}
	return data
}

func FuzzDecode(f *testing.F) {
	addFixtures(f, ".result.json")
	f.Add([]byte(`{` + minimal + `}`))
	f.Add([]byte(`{` + minimal + `,"artifacts":{"wacz":"s3://bucket/k"}}`))
	f.Add([]byte(`{` + minimal + `,"artifacts":{"wacz":"s3://other/k"}}`))
	f.Add([]byte(`{` + minimal + `,"artifacts":{"wacz":"s3://bucket/"}}`))
	f.Add([]byte(`{` + minimal + `,"artifacts":{"wacz":"s3://bucket/org/a/../../b/k.wacz"}}`))
	f.Add([]byte(`{"task_id":"2B9E63EC-4F1A-4C6E-9D2B-7A51C0E8F3D4","status":"CAPTURE_STATUS_SUCCESS","url":"u","timestamp":"2026-01-01T00:00:00+09:00","artifacts":{"wacz":"s3://bucket/a b+c"}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"taskId":"abc"}`))

	const bucket = "bucket"
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "manifest: ") {
				t.Fatalf("error %T %q is not a manifest *FieldError", err, err)
			}
			return
		}
		if id, ok := canonicalUUID(m.TaskID); !ok || id != m.TaskID {
			t.Errorf("TaskID %q is not a lower-case UUID", m.TaskID)
		}
		if !knownStatuses[m.Status] {
			t.Errorf("Status %q is not normalised", m.Status)
		}
		if m.URL == "" || m.Labels == nil || m.Timestamp.Location() != time.UTC {
			t.Errorf("required members not set: %+v", m)
		}
		if m.CorrelationID != nil && *m.CorrelationID == "" {
			t.Errorf("CorrelationID is an empty string, want nil")
		}

		row, err := m.Archive(bucket)
		switch {
		case err == nil:
			if m.Status != StatusSuccess || m.Artifacts.WACZ == "" {
				t.Errorf("admitted %s manifest with wacz %q", m.Status, m.Artifacts.WACZ)
			}
			if row.Bucket != bucket || row.ObjectKey == "" || "s3://"+bucket+"/"+row.ObjectKey != m.Artifacts.WACZ {
				t.Errorf("row %q/%q does not match wacz %q inside %q", row.Bucket, row.ObjectKey, m.Artifacts.WACZ, bucket)
			}
			if err := CheckKey(row.ObjectKey); err != nil {
				t.Errorf("admitted a WACZ key the ledger refuses: %v", err)
			}
			if row.TaskID != m.TaskID || row.SourceURL != m.URL || !row.CapturedAt.Equal(m.Timestamp) ||
				!reflect.DeepEqual(row.Labels, m.Labels) || !reflect.DeepEqual(row.CorrelationID, m.CorrelationID) ||
				!reflect.DeepEqual(row.WaczComplete, m.WaczComplete) || !reflect.DeepEqual(row.Signed, m.Signed) {
				t.Errorf("row %+v does not carry manifest %+v", row, m)
			}
		case errors.Is(err, ErrNoArchive):
			if m.Status == StatusSuccess && m.Artifacts.WACZ != "" {
				t.Errorf("success with wacz %q read as no archive", m.Artifacts.WACZ)
			}
		default:
			var mismatch *BucketMismatchError
			if !errors.Is(err, ErrNotS3Location) && !errors.As(err, &mismatch) {
				t.Errorf("unexpected Archive error %v", err)
			}
			if !errIsField(err, "artifacts.wacz") || !strings.HasSuffix(err.Error(), m.Artifacts.WACZ) {
				t.Errorf("error %q does not name artifacts.wacz and its location", err)
			}
		}

		again, err := Decode(encodeManifest(t, m))
		if err != nil {
			t.Fatalf("re-decoding: %v", err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Errorf("round trip changed the manifest:\n got %#v\nwant %#v", again, m)
		}
	})
}

func errIsField(err error, field string) bool {
	var fe *FieldError
	return errors.As(err, &fe) && fe.Field == field
}

func FuzzParseS3Location(f *testing.F) {
	for _, s := range []string{"s3://b/k", "s3://b/a/b c+d/日本", "s3://", "s3:///k", "s3://b/", "https://x/y", "", "s3://b//k",
		"s3://b/../k", "s3://b/a/./k", "s3://b/a/..", "s3://b/k/", "s3://b/" + strings.Repeat("k", MaxKeyBytes+1), "s3://b/a\x00", "s3://b/\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, loc string) {
		bucket, key, err := ParseS3Location(loc)
		if err != nil {
			if !errors.Is(err, ErrNotS3Location) || err.Error() != "not an s3:// location the ledger can read: "+loc {
				t.Errorf("error = %q", err)
			}
			if out := ManifestOutcome(loc, "", "b"); out.Key != "" || out.Error != err.Error() {
				t.Errorf("ManifestOutcome = %+v, want error %q", out, err)
			}
			return
		}
		if bucket == "" || key == "" || strings.Contains(bucket, "/") || "s3://"+bucket+"/"+key != loc {
			t.Errorf("ParseS3Location(%q) = %q, %q", loc, bucket, key)
		}
		// Inside the bucket, the key is read only when it names one object:
		// no empty, "." or ".." segment, at most 1,024 bytes of UTF-8
		// without U+0000. Otherwise the reason is the manifest error.
		bad := len(key) > MaxKeyBytes || !utf8.ValidString(key) || strings.ContainsRune(key, 0)
		for _, seg := range strings.Split(key, "/") {
			bad = bad || seg == "" || seg == "." || seg == ".."
		}
		keyErr := CheckKey(key)
		if bad != (keyErr != nil) {
			t.Errorf("CheckKey(%q) = %v", key, keyErr)
		}
		out := ManifestOutcome(loc, "", bucket)
		var ke *KeyError
		switch _, err := KeyInBucket(loc, bucket); {
		case !bad && out != (Outcome{Key: key}):
			t.Errorf("ManifestOutcome inside the bucket = %+v, want key %q", out, key)
		case bad && (!errors.As(err, &ke) || !errors.Is(err, ErrNotS3Location) || out != (Outcome{Error: err.Error()}) ||
			!strings.HasPrefix(out.Error, "not an s3:// location the ledger can read (") || !strings.HasSuffix(out.Error, "): "+loc)):
			t.Errorf("ManifestOutcome of a refused key = %+v (%v)", out, err)
		}
		other := bucket + "x"
		want := "written to bucket " + bucket + ", but the ledger reads " + other + ": " + loc
		if out := ManifestOutcome(loc, "", other); out != (Outcome{Error: want}) {
			t.Errorf("ManifestOutcome outside the bucket = %+v, want error %q", out, want)
		}
	})
}

func FuzzDecodeLinks(f *testing.F) {
	addFixtures(f, ".links.json")
	f.Add([]byte(`{"links":[]}`))
	f.Add([]byte(`{"links":[{"href":"https://a/","rel":null},{"href":1},{"href":"x","rel":[]}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		links, err := DecodeLinks(data)
		if err != nil {
			if !errors.Is(err, ErrNotLinksFile) || links != nil {
				t.Errorf("DecodeLinks = %v, %v", links, err)
			}
			return
		}
		if links == nil {
			t.Fatal("nil links without an error")
		}
		items := make([]map[string]any, 0, len(links))
		for _, l := range links {
			item := map[string]any{"href": l.Href}
			if l.Rel != nil {
				item["rel"] = *l.Rel
			}
			items = append(items, item)
		}
		encoded, err := json.Marshal(map[string]any{"links": items})
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeLinks(encoded)
		if err != nil || !reflect.DeepEqual(again, links) {
			t.Errorf("round trip: got %v, %v; want %v", again, err, links)
		}
	})
}

func FuzzDecodePages(f *testing.F) {
	addFixtures(f, ".pages.jsonl")
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"url":"https://a/","text":"t","textTruncated":true,"textWithheld":"deny"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pages, err := DecodePages(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("DecodePages on a bytes.Reader: %v", err)
		}
		if pages == nil || len(pages) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d pages from %d lines", len(pages), bytes.Count(data, []byte("\n"))+1)
		}
		var buf bytes.Buffer
		for _, p := range pages {
			if p.URL == "" {
				t.Errorf("page without a url: %+v", p)
			}
			line := map[string]any{"id": p.ID, "url": p.URL, "ts": p.TS, "title": p.Title, "text": p.Text, "textTruncated": p.TextTruncated}
			if p.TextWithheld != nil {
				line["textWithheld"] = *p.TextWithheld
			}
			enc, err := json.Marshal(line)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(enc)
			buf.WriteByte('\n')
		}
		again, err := DecodePages(&buf)
		if err != nil || !reflect.DeepEqual(again, pages) {
			t.Errorf("round trip: got %+v, %v; want %+v", again, err, pages)
		}
	})
}
