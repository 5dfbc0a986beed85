package wacz

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"testing"
	"time"
)

// The page of the fixture capture: a redirect to a page with a stylesheet,
// an image, a missing image and Japanese text.
const (
	fixtureStart = "http://example.test/start"
	fixturePage  = "https://www.example.test/"
	fixtureCSS   = "https://www.example.test/style.css"
	fixtureImg   = "https://www.example.test/img/logo.png?v=2&a=1"
	fixtureGone  = "https://www.example.test/missing.png"
	fixtureText  = "桜の花が静かに咲いています"
	fixtureTitle = "春の庭 — a test page"
)

var fixtureHTML = `<!doctype html>
<html lang="ja"><head><meta charset="utf-8"><title>` + fixtureTitle + `</title>
<link rel="stylesheet" href="/style.css"></head>
<body><h1>春の庭</h1><p class="lead">` + fixtureText + `</p>
<p><img src="/img/logo.png?v=2&amp;a=1" alt="logo" width="64" height="64"></p>
<p><img src="/missing.png" alt="gone"></p>
<p>An English line &amp; some <b>markup</b>.</p></body></html>
`

const fixtureCSSBody = "body { background: #fdf6f0; font-family: sans-serif; }\n.lead { color: #c0306a; font-size: 2em; }\n"

// testPNG is a small real PNG of one colour.
func testPNG(t testing.TB, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fixtureCapture is what a capturer would have recorded loading
// fixtureStart.
func fixtureCapture(t testing.TB) Capture {
	t.Helper()
	base := time.Date(2026, 5, 1, 10, 0, 3, 250_000_000, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	req := hdr("User-Agent", "ledgerctl-test", "Accept", "*/*")
	return Capture{
		Created:  at(4000),
		Software: "ledgerctl v0.0.0-test",
		Exchanges: []Exchange{
			{URL: fixtureStart, RequestHeader: req, Date: at(0), Status: 301,
				Header: hdr("Location", fixturePage, "Content-Type", "text/html", "Content-Length", "0")},
			{URL: fixturePage, RequestHeader: req, Date: at(120), Status: 200, Proto: "HTTP/2.0", IP: "192.0.2.7",
				Header: hdr("Content-Type", "text/html; charset=utf-8", "Content-Encoding", "gzip",
					"Content-Length", "99", "Transfer-Encoding", "chunked", ":status", "200", "Set-Cookie", "a=1", "Set-Cookie", "b=2"),
				Body: []byte(fixtureHTML)},
			{URL: fixtureCSS, RequestHeader: req, Date: at(300), Status: 200,
				Header: hdr("Content-Type", "text/css"), Body: []byte(fixtureCSSBody)},
			{URL: fixtureImg, RequestHeader: req, Date: at(310), Status: 200,
				Header: hdr("Content-Type", "image/png"), Body: testPNG(t, 64, 64, color.RGBA{200, 40, 100, 255})},
			{URL: fixtureGone, RequestHeader: req, Date: at(320), Status: 404,
				Header: hdr("Content-Type", "text/plain"), Body: []byte("not found\n")},
		},
		Pages: []Page{{
			URL: fixtureStart, FinalURL: fixturePage, Date: at(0), Title: fixtureTitle,
			Text: "春の庭\n" + fixtureText + "\nAn English line & some markup.",
		}},
		Screenshot: &Screenshot{PageURL: fixtureStart, Date: at(3500), PNG: testPNG(t, 32, 20, color.White)},
	}
}

// writeWACZ writes c and fails the test on an error.
func writeWACZ(t testing.TB, c Capture) ([]byte, Summary) {
	t.Helper()
	var buf bytes.Buffer
	sum, err := Write(&buf, c)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes(), sum
}

// zipEntry is one entry of a ZIP the tests take apart and put together.
type zipEntry struct {
	name   string
	data   []byte
	method uint16
}

func unzip(t testing.TB, b []byte) []zipEntry {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out []zipEntry
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		out = append(out, zipEntry{name: f.Name, data: data, method: f.Method})
	}
	return out
}

func rezip(t testing.TB, entries []zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: e.method}
		var w io.Writer
		var err error
		if e.method == zip.Store {
			hdr.CRC32 = crc32.ChecksumIEEE(e.data)
			hdr.CompressedSize64 = uint64(len(e.data))
			hdr.UncompressedSize64 = uint64(len(e.data))
			w, err = zw.CreateRaw(hdr)
		} else {
			w, err = zw.CreateHeader(hdr)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func entry(t testing.TB, entries []zipEntry, name string) []byte {
	t.Helper()
	for _, e := range entries {
		if e.name == name {
			return e.data
		}
	}
	t.Fatalf("no entry %s", name)
	return nil
}
