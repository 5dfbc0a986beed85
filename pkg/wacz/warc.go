package wacz

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/net/http/httpguts"
)

// warcField is one WARC named field, written in the order given.
type warcField struct{ name, value string }

// warcWriter appends WARC/1.1 records to one .warc.gz, each record its own
// gzip member so a reader can seek to any record by offset and length.
type warcWriter struct {
	out     *bytes.Buffer
	gz      *gzip.Writer
	head    bytes.Buffer // the record being written's WARC header
	records int
	// revisits counts the revisit records, revisitBytes the payload bytes
	// they did not store.
	revisits     int
	revisitBytes int64
}

// member is where one record's gzip member sits in the .warc.gz.
type member struct{ offset, length int64 }

// gzipLevel is the compression of each record. klauspost/compress's level
// 6 writes members within a few percent of compress/gzip's default level
// at several times its speed, and resetting it between records does not
// clear half a megabyte of hash tables as the standard library's levels 2–9
// do (which, with one member per record, cost more than compressing a small
// record).
const gzipLevel = 6

// The gzip writers and output buffers of finished WARCs, reused: a writer
// holds hundreds of kilobytes of tables, a buffer the size of a page.
var (
	gzipPool   = sync.Pool{New: func() any { gz, _ := gzip.NewWriterLevel(nil, gzipLevel); return gz }}
	bufferPool sync.Pool // *bytes.Buffer
)

// maxPooledBuffer is the largest WARC buffer kept for reuse; a larger one
// (a page of big media) is left to the collector.
const maxPooledBuffer = 64 << 20

// newWARCWriter expects about sizeHint bytes of output, so the buffer is
// not regrown and copied while records are added. release gives its
// memory back once the WARC has been copied out.
func newWARCWriter(sizeHint int) *warcWriter {
	// The gzip header carries no name and no time, so equal input gives
	// equal bytes.
	w := &warcWriter{gz: gzipPool.Get().(*gzip.Writer)}
	if b, ok := bufferPool.Get().(*bytes.Buffer); ok {
		b.Reset()
		w.out = b
	} else {
		w.out = new(bytes.Buffer)
	}
	w.out.Grow(sizeHint)
	return w
}

// release returns the writer's gzip writer and buffer for reuse; w and the
// bytes it wrote must not be used after.
func (w *warcWriter) release() {
	w.gz.Reset(nil)
	gzipPool.Put(w.gz)
	if w.out.Cap() <= maxPooledBuffer {
		bufferPool.Put(w.out)
	}
	w.gz, w.out = nil, nil
}

// add writes one record whose block is the concatenation of parts.
// Content-Length is computed here; fields must not contain it.
func (w *warcWriter) add(fields []warcField, parts ...[]byte) (member, error) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	head := &w.head
	head.Reset()
	head.WriteString("WARC/1.1\r\n")
	for _, f := range fields {
		head.WriteString(f.name)
		head.WriteString(": ")
		head.WriteString(f.value)
		head.WriteString("\r\n")
	}
	head.WriteString("Content-Length: " + strconv.Itoa(n) + "\r\n\r\n")

	start := int64(w.out.Len())
	w.gz.Reset(w.out)
	if _, err := w.gz.Write(head.Bytes()); err != nil {
		return member{}, err
	}
	for _, p := range parts {
		if _, err := w.gz.Write(p); err != nil {
			return member{}, err
		}
	}
	if _, err := w.gz.Write(recordEnd); err != nil {
		return member{}, err
	}
	if err := w.gz.Close(); err != nil {
		return member{}, err
	}
	w.records++
	return member{offset: start, length: int64(w.out.Len()) - start}, nil
}

var recordEnd = []byte("\r\n\r\n")

// sha256Digest is a WARC digest of the concatenated parts: "sha256:<hex>"
// (gowarc, warcio.js and wabac all read base-16 digests).
func sha256Digest(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// warcDate is the WARC-Date of t: UTC to the second, the precision CDXJ
// timestamps have.
func warcDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// cdxjTimestamp is the 14-digit CDXJ form of t.
func cdxjTimestamp(t time.Time) string { return t.UTC().Format("20060102150405") }

// warcDateMilli is the WARC-Date of t to the millisecond (W3C-ISO8601 with
// a fraction, as WARC 1.1 allows).
func warcDateMilli(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// cdxjTimestampMilli is the 17-digit CDXJ form of t (milliseconds), as
// warcio.js writes it.
func cdxjTimestampMilli(t time.Time) string {
	t = t.UTC()
	return t.Format("20060102150405") + fmt.Sprintf("%03d", t.Nanosecond()/int(time.Millisecond))
}

// responseHead is the HTTP status line and header of a stored response. The
// body is stored decoded, so the header no longer describes the wire: the
// encodings are dropped and Content-Length is the stored length. HTTP/2 and
// HTTP/3 responses are written as HTTP/1.1 (their pseudo-headers dropped),
// which is what replay tools parse, as BrowserHive does.
func responseHead(x Exchange) []byte {
	proto := "HTTP/1.1"
	if x.Proto == "HTTP/1.0" {
		proto = x.Proto
	}
	reason := x.StatusText
	if reason == "" {
		reason = http.StatusText(x.Status)
	}
	var b bytes.Buffer
	b.WriteString(proto + " " + strconv.Itoa(x.Status) + " " + cleanValue(reason) + "\r\n")
	writeHeader(&b, x.Header, func(name string) bool {
		switch http.CanonicalHeaderKey(name) {
		case "Content-Encoding", "Transfer-Encoding", "Content-Length":
			return true
		}
		return false
	})
	b.WriteString("Content-Length: " + strconv.Itoa(len(x.Body)) + "\r\n\r\n")
	return b.Bytes()
}

// requestHead is the HTTP request line and header of a stored request, with
// Host first (synthesised from the URL, as HTTP/2 sends :authority instead).
func requestHead(x Exchange, u *url.URL) []byte {
	method := x.Method
	if method == "" {
		method = http.MethodGet
	}
	var b bytes.Buffer
	b.WriteString(method + " " + u.RequestURI() + " HTTP/1.1\r\n")
	b.WriteString("Host: " + cleanValue(u.Host) + "\r\n")
	writeHeader(&b, x.RequestHeader, func(name string) bool {
		return http.CanonicalHeaderKey(name) == "Host"
	})
	b.WriteString("\r\n")
	return b.Bytes()
}

// writeHeader writes h sorted by name so equal input gives equal bytes.
// Names that are not HTTP tokens (HTTP/2 pseudo-headers such as ":status",
// or garbage) cannot be written as HTTP/1.1 and are left out; control
// characters in values become spaces so no value can end the header early.
func writeHeader(b *bytes.Buffer, h http.Header, skip func(string) bool) {
	names := make([]string, 0, len(h))
	for name := range h {
		if httpguts.ValidHeaderFieldName(name) && !skip(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range h[name] {
			b.WriteString(name + ": " + cleanValue(v) + "\r\n")
		}
	}
}

func cleanValue(v string) string {
	if !strings.ContainsFunc(v, isCTL) {
		return v
	}
	return strings.Map(func(r rune) rune {
		if isCTL(r) {
			return ' '
		}
		return r
	}, v)
}

func isCTL(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }

// mediaType is the CDXJ mime of a header: the Content-Type without
// parameters, lower-cased; "unk" when there is none (pywb's spelling).
func mediaType(h http.Header) string {
	ct := h.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.ToLower(strings.TrimSpace(ct))
	if ct == "" || strings.ContainsAny(ct, " \t\"") {
		return "unk"
	}
	return ct
}
