package wacz

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc/v3"
)

// revisitCapture is the fixture with the stylesheet and the image marked
// as stored elsewhere: the stylesheet by an earlier capture of its URL in
// another WACZ, the image under another URL.
func revisitCapture(t testing.TB) Capture {
	c := fixtureCapture(t)
	orig := time.Date(2026, 4, 30, 9, 0, 1, 0, time.UTC)
	c.Exchanges[2].Revisit = &Revisit{RefersToURI: fixtureCSS, RefersToDate: orig, Container: "task-1_crawl.wacz"}
	c.Exchanges[3].Revisit = &Revisit{RefersToURI: "http://garden.test/other.png", RefersToDate: orig.Add(time.Second)}
	return c
}

// TestWriteRevisits: an exchange marked as a revisit is written as a WARC
// revisit record of the identical-payload-digest profile — the response's
// HTTP header, no body, the payload digest of the body it stands for, the
// original's URI and date (and its WACZ when known), dated to the
// millisecond — with no request record, indexed as warc/revisit with a
// 17-digit timestamp; strict gowarc reads every record (digests
// included) through the index, and Verify accepts the WACZ.
func TestWriteRevisits(t *testing.T) {
	t.Parallel()
	c := revisitCapture(t)
	b, sum := writeWACZ(t, c)
	full, fullSum := writeWACZ(t, fixtureCapture(t))
	if err := Verify(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if sum.Revisits != 2 || sum.RevisitBytes != int64(len(c.Exchanges[2].Body)+len(c.Exchanges[3].Body)) {
		t.Errorf("summary: %d revisits of %d bytes", sum.Revisits, sum.RevisitBytes)
	}
	if sum.Records != fullSum.Records-2 {
		t.Errorf("%d records, want %d (two request records fewer)", sum.Records, fullSum.Records-2)
	}
	if len(b) >= len(full)-len(c.Exchanges[3].Body)/2 {
		t.Errorf("the WACZ with revisits is %d bytes, the one without %d", len(b), len(full))
	}

	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var warcFile *zip.File
	var index []byte
	for _, f := range zr.File {
		switch f.Name {
		case WARCPath:
			warcFile = f
		case IndexPath:
			rc, _ := f.Open()
			index, _ = io.ReadAll(rc)
			rc.Close()
		}
	}
	dataOff, err := warcFile.DataOffset()
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, line := range strings.Split(strings.TrimSuffix(string(index), "\n"), "\n") {
		e, err := ParseCDXJLine(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		br := bufio.NewReader(io.NewSectionReader(bytes.NewReader(b), dataOff+e.Offset, e.Length))
		rec := readRecord(t, br)
		var x *Exchange
		for i := range c.Exchanges {
			if c.Exchanges[i].URL == e.URL {
				x = &c.Exchanges[i]
			}
		}
		if x == nil || x.Revisit == nil {
			if rec.Type() == gowarc.Revisit || e.Mime == "warc/revisit" {
				t.Errorf("%s is a revisit", e.URL)
			}
			continue
		}
		found++
		h := rec.WarcHeader()
		want := map[string]string{
			gowarc.WarcType:              "revisit",
			gowarc.WarcProfile:           "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
			gowarc.WarcRefersToTargetURI: x.Revisit.RefersToURI,
			gowarc.WarcRefersToDate:      x.Revisit.RefersToDate.Format(time.RFC3339),
			gowarc.WarcPayloadDigest:     sha256Digest(x.Body),
			gowarc.WarcDate:              x.Date.UTC().Format("2006-01-02T15:04:05.000Z"),
			"WARC-Refers-To-Container":   x.Revisit.Container,
		}
		for k, v := range want {
			if got := h.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", e.URL, k, got, v)
			}
		}
		if e.Mime != "warc/revisit" || e.Status != 200 || e.Digest != sha256Digest(x.Body) || e.Timestamp != x.Date.UTC().Format("20060102150405.000")[:14]+x.Date.UTC().Format(".000")[1:] {
			t.Errorf("index line %q", line)
		}
		if p := payload(t, rec); len(p) != 0 {
			t.Errorf("%s: the revisit holds %d payload bytes", e.URL, len(p))
		}
		// The HTTP header is the response's: status and content type.
		blk, _ := rec.Block().RawBytes()
		raw, _ := io.ReadAll(blk)
		if !bytes.HasPrefix(raw, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.Contains(raw, []byte("Content-Type: ")) {
			t.Errorf("%s: revisit block %q", e.URL, raw)
		}
	}
	if found != 2 {
		t.Errorf("%d revisit lines in the index, want 2", found)
	}
	all := gunzipAll(t, mustEntry(t, b, WARCPath))
	if n := bytes.Count(all, []byte("WARC-Type: request\r\n")); n != len(c.Exchanges)-2 {
		t.Errorf("%d request records, want one per response (%d)", n, len(c.Exchanges)-2)
	}
	if bytes.Contains(all, []byte(fixtureCSSBody)) {
		t.Error("the stylesheet's body is in the WARC")
	}
}

func mustEntry(t testing.TB, b []byte, name string) []byte { return entry(t, unzip(t, b), name) }

// TestWriteRefusesBadRevisits: a revisit naming no usable original, a
// container that is not a plain .wacz file name, or a truncated body is
// refused naming the field, and nothing is written.
func TestWriteRefusesBadRevisits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		mod   func(*Revisit, *Exchange)
		field string
	}{
		{"relative uri", func(r *Revisit, _ *Exchange) { r.RefersToURI = "/style.css" }, "exchanges[2].revisit.refersToUri"},
		{"nul in uri", func(r *Revisit, _ *Exchange) { r.RefersToURI = "http://a.test/\x00" }, "exchanges[2].revisit.refersToUri"},
		{"no date", func(r *Revisit, _ *Exchange) { r.RefersToDate = time.Time{} }, "exchanges[2].revisit.refersToDate"},
		{"path in container", func(r *Revisit, _ *Exchange) { r.Container = "../other.wacz" }, "exchanges[2].revisit.container"},
		{"url container", func(r *Revisit, _ *Exchange) { r.Container = "file://x.wacz" }, "exchanges[2].revisit.container"},
		{"crlf in container", func(r *Revisit, _ *Exchange) { r.Container = "a\r\nWARC-Type: response\r\n.wacz" }, "exchanges[2].revisit.container"},
		{"not wacz", func(r *Revisit, _ *Exchange) { r.Container = "a.warc" }, "exchanges[2].revisit.container"},
		{"invalid utf-8", func(r *Revisit, _ *Exchange) { r.Container = "\xff.wacz" }, "exchanges[2].revisit.container"},
		{"truncated", func(_ *Revisit, x *Exchange) { x.Truncated = true }, "exchanges[2].revisit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := revisitCapture(t)
			tc.mod(c.Exchanges[2].Revisit, &c.Exchanges[2])
			var buf bytes.Buffer
			_, err := Write(&buf, c)
			if !errors.Is(err, ErrInvalidCapture) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("err = %v, want ErrInvalidCapture naming %s", err, tc.field)
			}
			if buf.Len() != 0 {
				t.Errorf("%d bytes written", buf.Len())
			}
		})
	}
}

// FuzzRevisitFields: whatever a revisit names, Write either refuses it
// (ErrInvalidCapture, nothing written) or writes a WACZ that Verify
// accepts, whose revisit record carries exactly those names.
func FuzzRevisitFields(f *testing.F) {
	f.Add("http://garden.test/style.css", "a_b.wacz", int64(1777539601))
	f.Add("https://x.test/a?b=c#d", "", int64(0))
	f.Add("http://x.test/\r\nWARC-Type: response", "x.wacz", int64(-1))
	f.Add("http://x.test/", "../../etc.wacz", int64(253402300799))
	f.Fuzz(func(t *testing.T, uri, container string, unix int64) {
		c := revisitCapture(t)
		r := c.Exchanges[2].Revisit
		r.RefersToURI, r.Container, r.RefersToDate = uri, container, time.Unix(unix, 0)
		var buf bytes.Buffer
		_, err := Write(&buf, c)
		if err != nil {
			if !errors.Is(err, ErrInvalidCapture) || buf.Len() != 0 {
				t.Fatalf("refused with %v after %d bytes", err, buf.Len())
			}
			return
		}
		b := buf.Bytes()
		if err := Verify(bytes.NewReader(b), int64(len(b))); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		all := gunzipAll(t, mustEntry(t, b, WARCPath))
		if !bytes.Contains(all, []byte("\r\nWARC-Refers-To-Target-URI: "+uri+"\r\n")) {
			t.Fatalf("the revisit does not name %q", uri)
		}
		if container != "" && !bytes.Contains(all, []byte("\r\nWARC-Refers-To-Container: "+container+"\r\n")) {
			t.Fatalf("the revisit does not name container %q", container)
		}
	})
}
