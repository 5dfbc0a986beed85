package wacz

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nlnwa/gowarc/v3"
)

// strictUnmarshaler is gowarc's reader failing on any syntax error or spec
// violation, digests included.
func strictUnmarshaler() gowarc.Unmarshaler {
	return gowarc.NewUnmarshaler(gowarc.WithStrictValidation())
}

// readRecord parses the one record in the gzip member rd and reads its
// block so gowarc checks the digests.
func readRecord(t *testing.T, rd io.Reader) gowarc.WarcRecord {
	t.Helper()
	rec, skipped, validation, err := strictUnmarshaler().Unmarshal(bufio.NewReader(rd))
	if err != nil {
		t.Fatalf("gowarc: %v", err)
	}
	if skipped != 0 || len(validation) != 0 {
		t.Fatalf("gowarc: skipped %d bytes, findings %v", skipped, validation)
	}
	if err := rec.Block().Cache(); err != nil {
		t.Fatalf("reading block: %v", err)
	}
	if v, err := rec.ValidateDigest(); err != nil || len(v) != 0 {
		t.Fatalf("digests of %s: %v %v", rec, err, v)
	}
	return rec
}

// payload is the HTTP payload of a response, the whole block otherwise.
func payload(t *testing.T, rec gowarc.WarcRecord) []byte {
	t.Helper()
	var r io.Reader
	var err error
	if pb, ok := rec.Block().(gowarc.PayloadBlock); ok {
		r, err = pb.PayloadBytes()
	} else {
		r, err = rec.Block().RawBytes()
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWriteVerifyReadsEveryRecordThroughTheIndex writes the fixture (a
// redirect, an HTML page with a stylesheet, an image, a 404 and Japanese
// text, plus a screenshot), checks it with Verify, and then reads every
// record the way a viewer does: from the CDXJ line's offset and length,
// inside the STORED entry of the ZIP, with gowarc as an independent reader.
func TestWriteVerifyReadsEveryRecordThroughTheIndex(t *testing.T) {
	t.Parallel()
	c := fixtureCapture(t)
	b, sum := writeWACZ(t, c)
	ra := bytes.NewReader(b)
	if err := Verify(ra, int64(len(b))); err != nil {
		t.Fatalf("Verify: %v", err)
	}

	zr, err := zip.NewReader(ra, int64(len(b)))
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

	want := map[string]Exchange{}
	for _, x := range c.Exchanges {
		want[x.URL] = x
	}
	lines := strings.Split(strings.TrimSuffix(string(index), "\n"), "\n")
	if len(lines) != len(c.Exchanges)+1 {
		t.Fatalf("index has %d lines, want one per response plus the screenshot (%d)", len(lines), len(c.Exchanges)+1)
	}
	seen := map[string]bool{}
	for _, line := range lines {
		e, err := ParseCDXJLine(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		seen[e.URL] = true
		// Exactly the member: gowarc must find one record and nothing after.
		member := io.NewSectionReader(ra, dataOff+e.Offset, e.Length)
		br := bufio.NewReader(member)
		rec := readRecord(t, br)
		if rest, _ := io.ReadAll(br); len(rest) != 0 {
			t.Errorf("%s: %d bytes after the record inside its range", e.URL, len(rest))
		}
		if got := rec.WarcHeader().Get(gowarc.WarcTargetURI); got != e.URL {
			t.Errorf("record at %d is for %q, index says %q", e.Offset, got, e.URL)
		}
		date, _ := rec.Date()
		if date.UTC().Format("20060102150405") != e.Timestamp {
			t.Errorf("%s: WARC-Date %v, index timestamp %s", e.URL, date, e.Timestamp)
		}
		if got := rec.WarcHeader().Get(gowarc.WarcPayloadDigest); got != e.Digest {
			t.Errorf("%s: payload digest %s, index says %s", e.URL, got, e.Digest)
		}
		if e.URL == "urn:view:"+fixtureStart {
			if rec.Type() != gowarc.Resource || e.Mime != "image/png" || e.Status != 200 {
				t.Errorf("screenshot: type %s, mime %s, status %d", rec.Type(), e.Mime, e.Status)
			}
			if !bytes.Equal(payload(t, rec), c.Screenshot.PNG) {
				t.Error("screenshot bytes differ")
			}
			continue
		}
		x := want[e.URL]
		if rec.Type() != gowarc.Response {
			t.Fatalf("%s: %s record", e.URL, rec.Type())
		}
		hb := rec.Block().(gowarc.HttpResponseBlock)
		if hb.HttpStatusCode() != x.Status || e.Status != x.Status {
			t.Errorf("%s: status %d, index %d, want %d", e.URL, hb.HttpStatusCode(), e.Status, x.Status)
		}
		if got := payload(t, rec); !bytes.Equal(got, x.Body) {
			t.Errorf("%s: body differs (%d bytes, want %d)", e.URL, len(got), len(x.Body))
		}
		h := hb.HttpHeader()
		if ct := x.Header.Get("Content-Type"); h.Get("Content-Type") != ct {
			t.Errorf("%s: Content-Type %q, want %q", e.URL, h.Get("Content-Type"), ct)
		}
		if x.Status == 301 && h.Get("Location") != fixturePage {
			t.Errorf("redirect Location %q", h.Get("Location"))
		}
	}
	for u := range want {
		if !seen[u] {
			t.Errorf("%s has no index line", u)
		}
	}
	if sum.Records != 2+2*len(c.Exchanges) || sum.Pages != 1 {
		t.Errorf("summary counts %+v", sum)
	}
}

// TestWriteRecordOrder reads data.warc.gz start to end with gowarc: one
// warcinfo, then response and request per exchange in capture order (the
// request concurrent to its response), then the screenshot.
func TestWriteRecordOrder(t *testing.T) {
	t.Parallel()
	c := fixtureCapture(t)
	b, _ := writeWACZ(t, c)
	warc := entry(t, unzip(t, b), WARCPath)
	br := bufio.NewReader(bytes.NewReader(warc))
	var recs []gowarc.WarcRecord
	for {
		if _, err := br.Peek(1); err == io.EOF {
			break
		}
		recs = append(recs, readRecord(t, br))
	}
	if len(recs) != 2+2*len(c.Exchanges) {
		t.Fatalf("%d records", len(recs))
	}
	info := recs[0]
	if info.Type() != gowarc.Warcinfo || info.Version().String() != "WARC/1.1" {
		t.Fatalf("first record %s", info)
	}
	ids := map[string]bool{}
	for _, r := range recs {
		if ids[r.RecordId()] {
			t.Errorf("record id %s repeats", r.RecordId())
		}
		ids[r.RecordId()] = true
		if !strings.HasPrefix(r.WarcHeader().Get(gowarc.WarcRecordID), "<urn:uuid:") {
			t.Errorf("record id %q is not <urn:uuid:…>", r.WarcHeader().Get(gowarc.WarcRecordID))
		}
		if d := r.WarcHeader().Get(gowarc.WarcBlockDigest); !strings.HasPrefix(d, "sha256:") || len(d) != 7+64 {
			t.Errorf("block digest %q is not sha256:<hex>", d)
		}
	}
	for i, x := range c.Exchanges {
		resp, req := recs[1+2*i], recs[2+2*i]
		if resp.Type() != gowarc.Response || req.Type() != gowarc.Request {
			t.Fatalf("exchange %d: %s then %s", i, resp.Type(), req.Type())
		}
		for _, r := range []gowarc.WarcRecord{resp, req} {
			if r.WarcHeader().Get(gowarc.WarcTargetURI) != x.URL {
				t.Errorf("exchange %d: target %q", i, r.WarcHeader().Get(gowarc.WarcTargetURI))
			}
		}
		if got := req.WarcHeader().Get(gowarc.WarcConcurrentTo); got != resp.WarcHeader().Get(gowarc.WarcRecordID) {
			t.Errorf("exchange %d: request concurrent to %q, response is %q", i, got, resp.WarcHeader().Get(gowarc.WarcRecordID))
		}
		hb := req.Block().(gowarc.HttpRequestBlock)
		if hb.HttpHeader().Get("User-Agent") != "ledgerctl-test" || !strings.HasPrefix(string(hb.ProtocolHeaderBytes()), "GET /") {
			t.Errorf("exchange %d: request %q", i, hb.ProtocolHeaderBytes())
		}
	}
	last := recs[len(recs)-1]
	if last.Type() != gowarc.Resource || last.WarcHeader().Get(gowarc.WarcTargetURI) != "urn:view:"+fixtureStart ||
		last.WarcHeader().Get(gowarc.ContentType) != "image/png" {
		t.Errorf("last record %s %v", last, last.WarcHeader())
	}
	req := recs[2+2*3].Block().(gowarc.HttpRequestBlock) // the image, with a query
	if head := string(req.ProtocolHeaderBytes()); !strings.HasPrefix(head, "GET /img/logo.png?v=2&a=1 HTTP/1.1\r\nHost: www.example.test\r\n") {
		t.Errorf("image request %q", head)
	}
}

// TestWriteStoredHeader checks what the stored response header says about
// the decoded body: no encodings, the stored length, no HTTP/2
// pseudo-headers, repeated headers kept, and no way for a value to end the
// header early.
func TestWriteStoredHeader(t *testing.T) {
	t.Parallel()
	x := Exchange{URL: "https://a.test/", Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Status: 200, Proto: "HTTP/2.0",
		Header: http.Header{
			"Content-Encoding":  {"br"},
			"Transfer-Encoding": {"chunked"},
			"Content-Length":    {"5"},
			":status":           {"200"},
			"Set-Cookie":        {"a=1", "b=2"},
			"X-Evil":            {"v\r\nX-Injected: yes"},
			"Bad Name":          {"x"},
		},
		Body: []byte("hello, world"),
	}
	head := string(responseHead(x))
	want := "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Evil: v  X-Injected: yes\r\nContent-Length: 12\r\n\r\n"
	if head != want {
		t.Errorf("head\n%q\nwant\n%q", head, want)
	}
	x.Proto, x.Status, x.StatusText = "HTTP/1.0", 299, ""
	if head := string(responseHead(x)); !strings.HasPrefix(head, "HTTP/1.0 299 \r\n") {
		t.Errorf("unknown status line %q", head)
	}
}

// TestWriteIsDeterministic: the same capture gives the same bytes; another
// capture time gives other record and page ids.
func TestWriteIsDeterministic(t *testing.T) {
	t.Parallel()
	c := fixtureCapture(t)
	a, sa := writeWACZ(t, c)
	b, sb := writeWACZ(t, fixtureCapture(t))
	if !bytes.Equal(a, b) || sa.SHA256 != sb.SHA256 {
		t.Fatal("two writes of the same capture differ")
	}
	c.Created = c.Created.Add(time.Second)
	d, _ := writeWACZ(t, c)
	if bytes.Equal(a, d) {
		t.Fatal("a later capture time gave the same bytes")
	}
	pa, pd := entry(t, unzip(t, a), PagesPath), entry(t, unzip(t, d), PagesPath)
	if bytes.Equal(pa, pd) {
		t.Error("page ids did not change with the capture time")
	}
}

func TestWriteSummary(t *testing.T) {
	t.Parallel()
	c := fixtureCapture(t)
	c.Exchanges[2].Truncated = true
	c.Exchanges = append(c.Exchanges,
		Exchange{URL: "https://www.example.test/cached.js", Date: c.Created, Status: 304},
		Exchange{URL: "https://www.example.test/both.js", Date: c.Created, Status: 304},
		Exchange{URL: "https://www.example.test/both.js", Date: c.Created, Status: 200, Body: []byte("x")},
		Exchange{URL: fixtureCSS, Date: c.Created, Status: 200, Truncated: true},
	)
	b, sum := writeWACZ(t, c)
	h := sha256.Sum256(b)
	if sum.Bytes != int64(len(b)) || sum.SHA256 != hex.EncodeToString(h[:]) {
		t.Errorf("summary says %d bytes %s; file is %d bytes %x", sum.Bytes, sum.SHA256, len(b), h)
	}
	if strings.Join(sum.TruncatedURLs, " ") != fixtureCSS {
		t.Errorf("TruncatedURLs = %q", sum.TruncatedURLs)
	}
	if strings.Join(sum.BodylessURLs, " ") != "https://www.example.test/cached.js" {
		t.Errorf("BodylessURLs = %q", sum.BodylessURLs)
	}
	if sum.Complete() || sum.Records != 2+2*len(c.Exchanges) || sum.Pages != 1 {
		t.Errorf("summary %+v", sum)
	}
	// The truncated response says so in its WARC header.
	if !bytes.Contains(gunzipAll(t, entry(t, unzip(t, b), WARCPath)), []byte("WARC-Target-URI: "+fixtureCSS+"\r\nWARC-Truncated: length\r\n")) {
		t.Error("no WARC-Truncated: length on the truncated response")
	}

	_, clean := writeWACZ(t, fixtureCapture(t))
	if !clean.Complete() || clean.TruncatedURLs == nil || len(clean.TruncatedURLs) != 0 {
		t.Errorf("complete capture: %+v", clean)
	}
}

// gunzipAll inflates every member of a .warc.gz into one stream.
func gunzipAll(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriteZipLayout: the entries, their order, a STORED archive/ entry,
// and every entry with its sizes in the local header (no
// data descriptor), which range readers rely on, and no extra field; an
// entry is deflated only when that makes it smaller.
func TestWriteZipLayout(t *testing.T) {
	t.Parallel()
	b, _ := writeWACZ(t, fixtureCapture(t))
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if strings.HasPrefix(f.Name, "archive/") && f.Method != zip.Store {
			t.Errorf("%s: method %d", f.Name, f.Method)
		}
		if f.Method == zip.Deflate && f.CompressedSize64 >= f.UncompressedSize64 {
			t.Errorf("%s: deflated to %d bytes from %d", f.Name, f.CompressedSize64, f.UncompressedSize64)
		}
		if f.Flags&0x8 != 0 {
			t.Errorf("%s: has a data descriptor", f.Name)
		}
		if len(f.Extra) != 0 {
			t.Errorf("%s: central directory extra field % x", f.Name, f.Extra)
		}
		off, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		// With no extra field the local header is 30 bytes and the name.
		local := b[off-30-int64(len(f.Name)):]
		if string(local[:4]) != "PK\x03\x04" || binary.LittleEndian.Uint16(local[28:]) != 0 {
			t.Errorf("%s: local header % x", f.Name, local[:30])
		}
		if !f.Modified.Equal(time.Date(2026, 5, 1, 10, 0, 6, 0, time.UTC)) && !f.Modified.Equal(time.Date(2026, 5, 1, 10, 0, 7, 0, time.UTC)) {
			t.Errorf("%s: modified %v", f.Name, f.Modified)
		}
	}
	if got := strings.Join(names, " "); got != "archive/data.warc.gz indexes/index.cdxj pages/pages.jsonl datapackage.json datapackage-digest.json" {
		t.Errorf("entries %s", got)
	}
	for _, name := range []string{IndexPath, PagesPath, DataPackage} {
		if f := findFile(zr, name); f == nil || f.Method != zip.Deflate {
			t.Errorf("%s is not deflated", name)
		}
	}
}

func TestWriteDataPackage(t *testing.T) {
	t.Parallel()
	c := fixtureCapture(t)
	b, _ := writeWACZ(t, c)
	entries := unzip(t, b)
	dpRaw := entry(t, entries, DataPackage)
	var dp struct {
		Profile      string `json:"profile"`
		WACZVersion  string `json:"wacz_version"`
		Title        string `json:"title"`
		Created      string `json:"created"`
		Software     string `json:"software"`
		MainPageURL  string `json:"mainPageUrl"`
		MainPageDate string `json:"mainPageDate"`
		Resources    []resource
	}
	if err := json.Unmarshal(dpRaw, &dp); err != nil {
		t.Fatal(err)
	}
	if dp.Profile != "data-package" || dp.WACZVersion != "1.1.1" || dp.Title != fixtureTitle ||
		dp.Created != "2026-05-01T10:00:07.250Z" || dp.Software != c.Software ||
		dp.MainPageURL != fixtureStart || dp.MainPageDate != "2026-05-01T10:00:03.250Z" {
		t.Errorf("datapackage %+v", dp)
	}
	var paths []string
	for _, r := range dp.Resources {
		paths = append(paths, r.Path)
		data := entry(t, entries, r.Path)
		if r.Bytes != int64(len(data)) || r.Hash != "sha256:"+hexSHA256(data) || r.Name != r.Path[strings.LastIndex(r.Path, "/")+1:] {
			t.Errorf("resource %+v does not describe its %d bytes", r, len(data))
		}
	}
	if strings.Join(paths, " ") != "archive/data.warc.gz indexes/index.cdxj pages/pages.jsonl" {
		t.Errorf("resources %v", paths)
	}
	var digest digestFile
	if err := json.Unmarshal(entry(t, entries, DigestPath), &digest); err != nil {
		t.Fatal(err)
	}
	if digest.Path != DataPackage || digest.Hash != "sha256:"+hexSHA256(dpRaw) {
		t.Errorf("digest %+v", digest)
	}

	// Without a title the main page's URL is the title; without pages
	// there is no main page.
	c.Pages[0].Title = ""
	b, _ = writeWACZ(t, c)
	if err := json.Unmarshal(entry(t, unzip(t, b), DataPackage), &dp); err != nil || dp.Title != fixtureStart {
		t.Errorf("untitled: %v %q", err, dp.Title)
	}
	c.Pages = nil
	b, _ = writeWACZ(t, c)
	var bare map[string]any
	if err := json.Unmarshal(entry(t, unzip(t, b), DataPackage), &bare); err != nil {
		t.Fatal(err)
	}
	if _, ok := bare["mainPageUrl"]; ok {
		t.Errorf("mainPageUrl without pages: %v", bare)
	}
}

func TestWritePagesText(t *testing.T) {
	t.Parallel()
	c := fixtureCapture(t)
	long := strings.Repeat("桜", MaxTextRunes-1) + "ab"
	exact := strings.Repeat("x", MaxTextRunes)
	c.Pages = []Page{
		{URL: "https://a.test/long", Date: c.Created, Title: "long", Text: long},
		{URL: "https://a.test/exact", Date: c.Created, Title: "exact", Text: exact},
		{URL: "https://a.test/flagged", Date: c.Created, Title: "", Text: "short", TextTruncated: true},
		{URL: "https://a.test/withheld", Date: c.Created, Title: "secret", Text: "secret", TextWithheld: "no-archive"},
		{URL: "https://a.test/title", Date: c.Created, Title: strings.Repeat("t", MaxTitleRunes+10), Text: "<b>&</b>"},
	}
	b, _ := writeWACZ(t, c)
	lines := strings.Split(string(entry(t, unzip(t, b), PagesPath)), "\n")
	if lines[0] != pagesHeader || lines[len(lines)-1] != "" || len(lines) != 2+len(c.Pages) {
		t.Fatalf("header %q, %d lines", lines[0], len(lines))
	}
	var got []map[string]any
	for _, l := range lines[1 : len(lines)-1] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if text := got[0]["text"].(string); utf8.RuneCountInString(text) != MaxTextRunes || got[0]["textTruncated"] != true ||
		text != strings.Repeat("桜", MaxTextRunes-1)+"a" {
		t.Errorf("long text: %d runes, truncated %v", utf8.RuneCountInString(text), got[0]["textTruncated"])
	}
	if got[1]["text"] != exact || got[1]["textTruncated"] != nil {
		t.Errorf("text of exactly MaxTextRunes runes was cut or flagged")
	}
	if got[2]["title"] != "" || got[2]["textTruncated"] != true {
		t.Errorf("flagged page %v", got[2])
	}
	if _, hasTitle := got[3]["title"]; hasTitle || got[3]["text"] != nil || got[3]["textWithheld"] != "no-archive" {
		t.Errorf("withheld page %v", got[3])
	}
	if n := utf8.RuneCountInString(got[4]["title"].(string)); n != MaxTitleRunes || !strings.Contains(lines[5], `"text":"<b>&</b>"`) {
		t.Errorf("title of %d runes; line %s", n, lines[5])
	}
	for i, m := range got {
		if _, err := time.Parse(time.RFC3339, m["ts"].(string)); err != nil || m["id"] == "" || m["url"] != c.Pages[i].URL {
			t.Errorf("page %d: %v", i, m)
		}
	}
}

// TestWriteRefusesBadCaptures: each bad field is named, and nothing is
// written.
func TestWriteRefusesBadCaptures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		mod   func(*Capture)
		field string
	}{
		{"no created", func(c *Capture) { c.Created = time.Time{} }, "created"},
		{"relative url", func(c *Capture) { c.Exchanges[1].URL = "/index.html" }, "exchanges[1].url"},
		{"ftp url", func(c *Capture) { c.Exchanges[0].URL = "ftp://a.test/x" }, "exchanges[0].url"},
		{"control char", func(c *Capture) { c.Exchanges[0].URL = "http://a.test/\x00" }, "exchanges[0].url"},
		{"bad method", func(c *Capture) { c.Exchanges[2].Method = "GET /x" }, "exchanges[2].method"},
		{"status 0", func(c *Capture) { c.Exchanges[3].Status = 0 }, "exchanges[3].status"},
		{"status 1000", func(c *Capture) { c.Exchanges[3].Status = 1000 }, "exchanges[3].status"},
		{"no date", func(c *Capture) { c.Exchanges[4].Date = time.Time{} }, "exchanges[4].date"},
		{"page url", func(c *Capture) { c.Pages[0].URL = "" }, "pages[0].url"},
		{"page date", func(c *Capture) { c.Pages[0].Date = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, "pages[0].date"},
		{"screenshot url", func(c *Capture) { c.Screenshot.PageURL = "about:blank" }, "screenshot.pageUrl"},
		{"screenshot empty", func(c *Capture) { c.Screenshot.PNG = nil }, "screenshot.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fixtureCapture(t)
			tc.mod(&c)
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

// TestWriteEmptyCapture: no exchanges, pages or screenshot still makes a
// valid (if useless) WACZ with only a warcinfo record.
func TestWriteEmptyCapture(t *testing.T) {
	t.Parallel()
	b, sum := writeWACZ(t, Capture{Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err := Verify(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	if sum.Records != 1 || sum.Pages != 0 || len(entry(t, unzip(t, b), IndexPath)) != 0 {
		t.Errorf("summary %+v", sum)
	}
}

// TestWriteIndexOrder: lines sort by SURT key then timestamp, whatever the
// capture order, and a URL captured twice keeps both lines.
func TestWriteIndexOrder(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	c := Capture{Created: at}
	for i, u := range []string{"https://b.test/", "https://a.test/z", "https://a.test/", "https://b.test/", "http://www.a.test/?b=1&a=2", "https://a.test:8443/"} {
		c.Exchanges = append(c.Exchanges, Exchange{URL: u, Date: at.Add(-time.Duration(i) * time.Hour), Status: 200, Body: []byte(u)})
	}
	b, _ := writeWACZ(t, c)
	var keys []string
	for _, l := range strings.Split(strings.TrimSpace(string(entry(t, unzip(t, b), IndexPath))), "\n") {
		e, err := ParseCDXJLine(l)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, e.Key+" "+e.Timestamp)
	}
	want := []string{
		"test,a)/ 20260228220000",
		"test,a)/?a=2&b=1 20260228200000",
		"test,a)/z 20260228230000",
		"test,a:8443)/ 20260228190000",
		"test,b)/ 20260228210000",
		"test,b)/ 20260301000000",
	}
	if strings.Join(keys, "\n") != strings.Join(want, "\n") || !sort.StringsAreSorted(keys) {
		t.Errorf("index keys\n%s\nwant\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
	if err := Verify(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
}
