package wacz

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestReadPagesRoundTrip(t *testing.T) {
	t.Parallel()
	c := fixtureCapture(t)
	c.Pages = append(c.Pages,
		Page{URL: "https://www.example.test/second", Date: c.Created, Title: "", Text: "", TextTruncated: true},
		Page{URL: "https://www.example.test/withheld", Date: c.Created, Title: "t", Text: "x", TextWithheld: "url-policy"},
	)
	b, _ := writeWACZ(t, c)
	pages, stats, err := ReadPages(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if stats != (PagesStats{Pages: 3, Headers: 1}) || len(pages) != 3 {
		t.Fatalf("stats %+v, %d pages", stats, len(pages))
	}
	first := pages[0]
	if first.URL != fixtureStart || first.Title != fixtureTitle || first.Text != c.Pages[0].Text || first.TextTruncated ||
		first.TS != "2026-05-01T10:00:03.250Z" || first.ID == "" || first.Extra != nil {
		t.Errorf("first page %+v", first)
	}
	if p := pages[1]; p.Title != "" || p.Text != "" || !p.TextTruncated || p.ID == first.ID {
		t.Errorf("second page %+v", p)
	}
	if p := pages[2]; p.TextWithheld != "url-policy" || p.Title != "" || p.Text != "" {
		t.Errorf("withheld page %+v", p)
	}
}

// wrapPages puts pages.jsonl content into an otherwise minimal ZIP.
func wrapPages(t *testing.T, jsonl []byte, method uint16) []byte {
	t.Helper()
	return rezip(t, []zipEntry{
		{name: "archive/data.warc.gz", data: []byte("not read"), method: zip.Store},
		{name: PagesPath, data: jsonl, method: method},
	})
}

func TestPagesReaderSkipsAndCounts(t *testing.T) {
	t.Parallel()
	huge := `{"url":"https://big.test/","text":"` + strings.Repeat("a", MaxPageLineBytes) + `"}`
	jsonl := strings.Join([]string{
		pagesHeader,
		`{"id":"1","url":"https://a.test/1","ts":"2026-01-01T00:00:00Z","title":"one","text":"一"}`,
		``,
		`not json`,
		`{"url":5}`,
		`{"title":"no url"}`,
		huge,
		`{"format":"json-pages-1.0","id":"extra","title":"Extra Pages"}`,
		"   ",
		`{"url":"https://a.test/2","ts":"2026-01-01T00:00:00Z","size":42}`,
		`{"url":"https://a.test/3","textTruncated":"yes"}`,
		`{"url":"https://a.test/last"}`, // no newline at the end
	}, "\n")
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		b := wrapPages(t, []byte(jsonl), method)
		pr, err := OpenPages(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		for {
			p, err := pr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			urls = append(urls, p.URL)
			if p.URL == "https://a.test/2" && string(p.Extra["size"]) != "42" {
				t.Errorf("extra member lost: %+v", p.Extra)
			}
		}
		if _, err := pr.Next(); !errors.Is(err, io.EOF) {
			t.Errorf("Next after the end = %v", err)
		}
		if err := pr.Close(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(urls, " "); got != "https://a.test/1 https://a.test/2 https://a.test/last" {
			t.Errorf("method %d: pages %s", method, got)
		}
		if s := pr.Stats(); s != (PagesStats{Pages: 3, Headers: 2, Malformed: 5}) {
			t.Errorf("method %d: stats %+v", method, s)
		}
	}
}

func TestOpenPagesErrors(t *testing.T) {
	t.Parallel()
	good, _ := writeWACZ(t, fixtureCapture(t))
	noPages := rezip(t, []zipEntry{{name: "datapackage.json", data: []byte("{}"), method: zip.Deflate}})

	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrNotZip},
		{"text", []byte("hello, this is not a zip file at all"), ErrNotZip},
		{"gzip", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}, ErrNotZip},
		{"cut short", good[:len(good)-30], ErrNotZip},
		{"no pages", noPages, ErrNoPages},
	} {
		_, err := OpenPages(bytes.NewReader(tc.data), int64(len(tc.data)))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}

	// Corrupt entry data shows up as ErrPagesCorrupt: a bad CRC on a STORED
	// entry at its end, broken deflate data while inflating.
	jsonl := []byte(pagesHeader + "\n" + `{"url":"https://a.test/"}` + "\n" + strings.Repeat(`{"url":"https://b.test/","text":"xyz"}`+"\n", 2000))
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		b := wrapPages(t, jsonl, method)
		zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		f := zr.File[1]
		off, _ := f.DataOffset()
		b[off+int64(f.CompressedSize64)/2] ^= 0x55
		_, _, err := ReadPages(bytes.NewReader(b), int64(len(b)))
		if !errors.Is(err, ErrPagesCorrupt) {
			t.Errorf("method %d: err = %v, want ErrPagesCorrupt", method, err)
		}
	}

	// A failing reader is the reader's error, not a broken archive: at the
	// directory, inside the pages entry, or an object shorter than its size.
	boom := errors.New("connection reset")
	_, err := OpenPages(failingReaderAt{r: bytes.NewReader(good), from: 0, to: int64(len(good)), err: boom}, int64(len(good)))
	if !errors.Is(err, boom) || errors.Is(err, ErrNotZip) {
		t.Errorf("failing reader: %v", err)
	}
	zr, _ := zip.NewReader(bytes.NewReader(good), int64(len(good)))
	pagesOff, _ := zr.File[2].DataOffset()
	pagesEnd := pagesOff + int64(zr.File[2].CompressedSize64)
	// The reader fails once the directory has been read: in a small WACZ
	// the pages entry can lie within the last kilobyte, which archive/zip
	// reads to find the directory.
	armed := false
	pr, err := OpenPages(failingReaderAt{r: bytes.NewReader(good), from: pagesOff, to: pagesEnd, err: boom, armed: &armed}, int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	armed = true
	if _, err := pr.Next(); !errors.Is(err, boom) || errors.Is(err, ErrPagesCorrupt) {
		t.Errorf("reader failing inside the pages: %v", err)
	}
	_, err = OpenPages(bytes.NewReader(good), int64(len(good))+100)
	if err == nil || errors.Is(err, ErrNotZip) {
		t.Errorf("object shorter than its size: %v", err)
	}
}

// failingReaderAt fails every read that touches [from, to), once *armed
// when armed is set.
type failingReaderAt struct {
	r        io.ReaderAt
	from, to int64
	err      error
	armed    *bool
}

func (f failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < f.to && off+int64(len(p)) > f.from && (f.armed == nil || *f.armed) {
		return 0, f.err
	}
	return f.r.ReadAt(p, off)
}

// countingReaderAt records the byte ranges read.
type countingReaderAt struct {
	r      io.ReaderAt
	mu     sync.Mutex
	n      int64
	ranges [][2]int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.mu.Lock()
	c.n += int64(n)
	c.ranges = append(c.ranges, [2]int64{off, off + int64(n)})
	c.mu.Unlock()
	return n, err
}

// TestOpenPagesReadsOnlyDirectoryAndPages: over a 20 MB WACZ, reading the
// pages touches a few kilobytes, none of them inside the WARC.
func TestOpenPagesReadsOnlyDirectoryAndPages(t *testing.T) {
	t.Parallel()
	rng := rand.NewChaCha8([32]byte{1, 2})
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	c := Capture{Created: at, Pages: []Page{{URL: "https://big.test/", Date: at, Title: "big", Text: "大きなページ"}}}
	for i := range 200 {
		body := make([]byte, 100<<10)
		_, _ = rng.Read(body) // incompressible
		c.Exchanges = append(c.Exchanges, Exchange{URL: "https://big.test/" + strings.Repeat("x", i%7) + "/" + string(rune('a'+i%26)), Date: at, Status: 200, Body: body})
	}
	b, _ := writeWACZ(t, c)
	cr := &countingReaderAt{r: bytes.NewReader(b)}
	pages, _, err := ReadPages(cr, int64(len(b)))
	if err != nil || len(pages) != 1 || pages[0].Text != "大きなページ" {
		t.Fatalf("pages %+v, %v", pages, err)
	}
	if cr.n*100 > int64(len(b)) {
		t.Errorf("read %d of %d bytes", cr.n, len(b))
	}
	zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	warc := zr.File[0]
	start, _ := warc.DataOffset()
	end := start + int64(warc.CompressedSize64)
	for _, r := range cr.ranges {
		if r[0] < end && r[1] > start {
			t.Errorf("read %d–%d overlaps the WARC at %d–%d", r[0], r[1], start, end)
		}
	}
	t.Logf("read %d bytes in %d reads of a %d-byte WACZ", cr.n, len(cr.ranges), len(b))
}

func FuzzOpenPages(f *testing.F) {
	good, _ := writeWACZ(f, fixtureCapture(f))
	f.Add(good)
	f.Add(wrapPagesF(f, []byte(pagesHeader+"\n{\"url\":\"u\"}\n{\"url\":5}\nx"), zip.Store))
	f.Add(wrapPagesF(f, []byte(pagesHeader+"\n{\"url\":\"u\"}"), zip.Deflate))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		pr, err := OpenPages(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, ErrNotZip) && !errors.Is(err, ErrNoPages) && !errors.Is(err, ErrPagesCorrupt) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		defer pr.Close()
		for {
			p, err := pr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				if !errors.Is(err, ErrPagesCorrupt) {
					t.Fatalf("unclassified error %v", err)
				}
				break
			}
			if p.URL == "" {
				t.Fatal("a page without a url")
			}
		}
		if s := pr.Stats(); s.Pages < 0 || s.Headers < 0 || s.Malformed < 0 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func wrapPagesF(f *testing.F, jsonl []byte, method uint16) []byte {
	return rezip(f, []zipEntry{{name: PagesPath, data: jsonl, method: method}})
}
