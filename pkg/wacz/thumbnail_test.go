package wacz

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testJPEG is a small real JPEG of one colour.
func testJPEG(t testing.TB, w, h int, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 70}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func withThumbnail(t testing.TB, c Capture) Capture {
	c.Thumbnail = &Thumbnail{PageURL: fixtureStart, Date: c.Created, Mime: "image/jpeg", Data: testJPEG(t, 40, 25, color.RGBA{10, 120, 200, 255})}
	return c
}

// TestThumbnailRoundTrip: Write stores the thumbnail as a urn:thumbnail:
// resource record the index names; the archive stays valid; ReadThumbnail
// returns the exact bytes, and falls back to the urn:view: screenshot.
func TestThumbnailRoundTrip(t *testing.T) {
	t.Parallel()
	c := withThumbnail(t, fixtureCapture(t))
	b, _ := writeWACZ(t, c)
	if err := Verify(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	index := string(entry(t, unzip(t, b), IndexPath))
	if !strings.Contains(index, `urn:thumbnail:`+fixtureStart+` `) || !strings.Contains(index, `"mime":"image/jpeg"`) {
		t.Fatalf("index has no thumbnail line:\n%s", index)
	}
	img, err := ReadThumbnail(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(img.Data, c.Thumbnail.Data) || img.Mime != "image/jpeg" || img.Width != 40 || img.Height != 25 ||
		img.URI != ThumbnailPrefix+fixtureStart || img.PageURL != fixtureStart {
		t.Errorf("thumbnail %s %s %d×%d %d bytes", img.URI, img.Mime, img.Width, img.Height, len(img.Data))
	}

	// Without a thumbnail, the screenshot.
	c.Thumbnail = nil
	b, _ = writeWACZ(t, c)
	img, err = ReadThumbnail(bytes.NewReader(b), int64(len(b)))
	if err != nil || !bytes.Equal(img.Data, c.Screenshot.PNG) || img.Mime != "image/png" || img.URI != ViewPrefix+fixtureStart {
		t.Errorf("screenshot fallback: %s %s, %v", img.URI, img.Mime, err)
	}
	// Without either: ErrNoThumbnail.
	c.Screenshot = nil
	b, _ = writeWACZ(t, c)
	if _, err := ReadThumbnail(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrNoThumbnail) {
		t.Errorf("no pictures: %v", err)
	}
	// Not a ZIP.
	if _, err := ReadThumbnail(strings.NewReader("hello"), 5); !errors.Is(err, ErrNotZip) {
		t.Errorf("not a zip: %v", err)
	}
}

// TestWriteRefusesBadThumbnail: the writer never stores a thumbnail whose
// bytes are not the image its type says.
func TestWriteRefusesBadThumbnail(t *testing.T) {
	t.Parallel()
	for name, th := range map[string]Thumbnail{
		"html":     {Mime: "image/png", Data: []byte("<html><script>alert(1)</script>")},
		"mislabel": {Mime: "image/jpeg", Data: testPNG(t, 4, 4, color.Black)},
		"gif type": {Mime: "image/gif", Data: testPNG(t, 4, 4, color.Black)},
		"cut":      {Mime: "image/png", Data: testPNG(t, 40, 40, color.Black)[:60]},
	} {
		c := fixtureCapture(t)
		th.PageURL, th.Date = fixtureStart, c.Created
		c.Thumbnail = &th
		var buf bytes.Buffer
		if _, err := Write(&buf, c); !errors.Is(err, ErrInvalidCapture) || !strings.Contains(err.Error(), "thumbnail.data") || buf.Len() != 0 {
			t.Errorf("%s: %v (%d bytes written)", name, err, buf.Len())
		}
	}
}

// TestReadThumbnailReadsOnlyItsRecord: over a 20 MB WACZ, the thumbnail
// costs a few kilobytes of reads, and the only bytes read inside the WARC
// are the thumbnail record's own.
func TestReadThumbnailReadsOnlyItsRecord(t *testing.T) {
	t.Parallel()
	rng := rand.NewChaCha8([32]byte{3, 4})
	at := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	c := Capture{Created: at, Pages: []Page{{URL: "https://big.test/", Date: at, Title: "big"}}}
	for i := range 200 {
		body := make([]byte, 100<<10)
		_, _ = rng.Read(body)
		c.Exchanges = append(c.Exchanges, Exchange{URL: "https://big.test/r/" + strconv.Itoa(i), Date: at, Status: 200, Body: body})
	}
	c.Screenshot = &Screenshot{PageURL: "https://big.test/", Date: at, PNG: testPNG(t, 1280, 800, color.White)}
	c.Thumbnail = &Thumbnail{PageURL: "https://big.test/", Date: at, Mime: "image/jpeg", Data: testJPEG(t, 400, 250, color.Black)}
	b, _ := writeWACZ(t, c)
	cr := &countingReaderAt{r: bytes.NewReader(b)}
	img, err := ReadThumbnail(cr, int64(len(b)))
	if err != nil || !bytes.Equal(img.Data, c.Thumbnail.Data) {
		t.Fatalf("%v", err)
	}
	if cr.n*100 > int64(len(b)) {
		t.Errorf("read %d of %d bytes", cr.n, len(b))
	}
	// Where the thumbnail record lies in the file.
	zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	warc := findFile(zr, WARCPath)
	start, _ := warc.DataOffset()
	end := start + int64(warc.CompressedSize64)
	var rec CDXJEntry
	for _, line := range strings.Split(strings.TrimSpace(string(entry(t, unzip(t, b), IndexPath))), "\n") {
		if e, err := ParseCDXJLine(line); err == nil && strings.HasPrefix(e.URL, ThumbnailPrefix) {
			rec = e
		}
	}
	recStart, recEnd := start+rec.Offset, start+rec.Offset+rec.Length
	for _, r := range cr.ranges {
		if r[0] < end && r[1] > start && (r[0] < recStart || r[1] > recEnd) {
			t.Errorf("read %d–%d inside the WARC (%d–%d) outside the thumbnail record %d–%d", r[0], r[1], start, end, recStart, recEnd)
		}
	}
	t.Logf("read %d bytes in %d reads of a %d-byte WACZ", cr.n, len(cr.ranges), len(b))
}

// hostilePicture builds a WACZ whose WARC holds one record with the given
// header fields and block, indexed by line (which %d/%d fill with the
// record's offset and length).
func hostilePicture(t testing.TB, fields []warcField, block []byte, line string, warcMethod uint16) []byte {
	t.Helper()
	ww := newWARCWriter(len(block) + 1024)
	pad, err := ww.add([]warcField{{"WARC-Type", "warcinfo"}}, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ww.add(fields, block)
	if err != nil {
		t.Fatal(err)
	}
	_ = pad
	line = strings.Replace(line, "OFF", strconv.FormatInt(m.offset, 10), 1)
	line = strings.Replace(line, "LEN", strconv.FormatInt(m.length, 10), 1)
	return rezip(t, []zipEntry{
		{name: WARCPath, data: ww.out.Bytes(), method: warcMethod},
		{name: IndexPath, data: []byte(line + "\n"), method: zip.Store},
	})
}

const thumbURI = "urn:thumbnail:https://evil.test/"

func thumbFields(ct string, uri string) []warcField {
	return []warcField{{"WARC-Type", "resource"}, {"WARC-Target-URI", uri}, {"WARC-Date", "2026-01-01T00:00:00Z"}, {"Content-Type", ct}}
}

func thumbLine(filename string) string {
	return thumbURI + ` 20260101000000 {"url":"` + thumbURI + `","mime":"image/png","status":"200","offset":"OFF","length":"LEN","filename":"` + filename + `"}`
}

// TestReadThumbnailHostile: what a hostile archive puts where the
// thumbnail should be is refused, never returned.
func TestReadThumbnailHostile(t *testing.T) {
	t.Parallel()
	goodPNG := testPNG(t, 8, 8, color.Black)
	// A PNG header claiming 100000×100000 pixels (a decompression bomb).
	bomb := bytes.Clone(goodPNG)
	copy(bomb[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0})
	binary.BigEndian.PutUint32(bomb[29:33], crc32.ChecksumIEEE(bomb[12:29])) // a valid IHDR
	if _, err := png.DecodeConfig(bytes.NewReader(bomb)); err != nil {
		t.Fatalf("the bomb's header should parse: %v", err)
	}
	html := []byte("<html><script>alert(document.cookie)</script></html>")
	cases := []struct {
		name string
		wacz []byte
	}{
		{"html labelled png", hostilePicture(t, thumbFields("image/png", thumbURI), html, thumbLine("data.warc.gz"), zip.Store)},
		{"png header then html", hostilePicture(t, thumbFields("image/png", thumbURI), append(bytes.Clone(goodPNG[:33]), html...), thumbLine("data.warc.gz"), zip.Store)},
		{"svg", hostilePicture(t, thumbFields("image/svg+xml", thumbURI), []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), thumbLine("data.warc.gz"), zip.Store)},
		{"bomb", hostilePicture(t, thumbFields("image/png", thumbURI), bomb, thumbLine("data.warc.gz"), zip.Store)},
		{"png labelled jpeg", hostilePicture(t, thumbFields("image/jpeg", thumbURI), goodPNG, thumbLine("data.warc.gz"), zip.Store)},
		{"another target", hostilePicture(t, thumbFields("image/png", "urn:thumbnail:https://other.test/"), goodPNG, thumbLine("data.warc.gz"), zip.Store)},
		{"a response record", hostilePicture(t, []warcField{{"WARC-Type", "response"}, {"WARC-Target-URI", thumbURI}, {"Content-Type", "image/png"}}, goodPNG, thumbLine("data.warc.gz"), zip.Store)},
		{"filename escapes", hostilePicture(t, thumbFields("image/png", thumbURI), goodPNG, thumbLine("../pages/pages.jsonl"), zip.Store)},
		{"filename absent", hostilePicture(t, thumbFields("image/png", thumbURI), goodPNG, thumbLine("other.warc.gz"), zip.Store)},
		{"warc deflated", hostilePicture(t, thumbFields("image/png", thumbURI), goodPNG, thumbLine("data.warc.gz"), zip.Deflate)},
		{"offset past the entry", hostilePicture(t, thumbFields("image/png", thumbURI), goodPNG, strings.Replace(thumbLine("data.warc.gz"), `"OFF"`, `"999999"`, 1), zip.Store)},
		{"huge length", hostilePicture(t, thumbFields("image/png", thumbURI), goodPNG, strings.Replace(thumbLine("data.warc.gz"), `"LEN"`, `"99999999999"`, 1), zip.Store)},
	}
	for _, tc := range cases {
		img, err := ReadThumbnail(bytes.NewReader(tc.wacz), int64(len(tc.wacz)))
		if !errors.Is(err, ErrBadThumbnail) {
			t.Errorf("%s: got %s %d bytes, %v; want ErrBadThumbnail", tc.name, img.Mime, len(img.Data), err)
		}
	}
	// The same construction with a real PNG is read: the cases above fail
	// for their fault alone.
	ok := hostilePicture(t, thumbFields("image/png", thumbURI), goodPNG, thumbLine("data.warc.gz"), zip.Store)
	if img, err := ReadThumbnail(bytes.NewReader(ok), int64(len(ok))); err != nil || !bytes.Equal(img.Data, goodPNG) {
		t.Errorf("control: %v", err)
	}
}

func FuzzReadThumbnail(f *testing.F) {
	good, _ := writeWACZ(f, withThumbnail(f, fixtureCapture(f)))
	f.Add(good)
	goodPNG := testPNG(f, 8, 8, color.Black)
	f.Add(hostilePicture(f, thumbFields("image/png", thumbURI), goodPNG, thumbLine("data.warc.gz"), zip.Store))
	f.Add(hostilePicture(f, thumbFields("image/png", thumbURI), goodPNG, thumbLine("data.warc.gz"), zip.Deflate))
	f.Add(hostilePicture(f, thumbFields("image/png", thumbURI), []byte("<b>x</b>"), thumbLine("data.warc.gz"), zip.Store))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := ReadThumbnail(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, ErrNotZip) && !errors.Is(err, ErrNoThumbnail) && !errors.Is(err, ErrBadThumbnail) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if img.Mime != "image/png" && img.Mime != "image/jpeg" {
			t.Fatalf("mime %q", img.Mime)
		}
		var decodeErr error
		if img.Mime == "image/png" {
			_, decodeErr = png.Decode(bytes.NewReader(img.Data))
		} else {
			_, decodeErr = jpeg.Decode(bytes.NewReader(img.Data))
		}
		if decodeErr != nil || len(img.Data) > MaxImageBytes {
			t.Fatalf("returned %d bytes that do not decode: %v", len(img.Data), decodeErr)
		}
	})
}
