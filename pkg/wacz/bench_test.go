package wacz

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// benchCapture is a page of 64 resources of 64 KiB: half text that
// compresses, half random bytes (images) that do not.
func benchCapture() Capture {
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.NewChaCha8([32]byte{9})
	c := Capture{Created: at, Pages: []Page{{URL: "https://bench.test/", Date: at, Title: "bench", Text: strings.Repeat("本文 text ", 10000)}}}
	for i := range 64 {
		body := make([]byte, 64<<10)
		ct := "image/jpeg"
		if i%2 == 0 {
			copy(body, strings.Repeat(fmt.Sprintf("<p class=item-%d>Line of text</p>\n", i), len(body)/30))
			ct = "text/html"
		} else {
			_, _ = rng.Read(body)
		}
		c.Exchanges = append(c.Exchanges, Exchange{URL: fmt.Sprintf("https://bench.test/r/%d", i), Date: at, Status: 200,
			Header: http.Header{"Content-Type": {ct}}, Body: body})
	}
	return c
}

// BenchmarkWriteVsGzip measures Write next to its limit in the same
// iteration: gzipping each body as its own member, with the compressor and
// level Write uses, and hashing the result, the work a WACZ of those bodies
// cannot avoid.
func BenchmarkWriteVsGzip(b *testing.B) {
	c := benchCapture()
	var total int64
	for _, x := range c.Exchanges {
		total += int64(len(x.Body))
	}
	var writeTime, limitTime time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		if _, err := Write(io.Discard, c); err != nil {
			b.Fatal(err)
		}
		writeTime += time.Since(start)

		start = time.Now()
		var out bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&out, gzipLevel)
		for _, x := range c.Exchanges {
			zw.Reset(&out)
			zw.Write(x.Body)
			zw.Close()
		}
		sha256.Sum256(out.Bytes())
		limitTime += time.Since(start)
		n++
	}
	mb := float64(total*int64(n)) / 1e6
	b.ReportMetric(mb/writeTime.Seconds(), "write-MB/s")
	b.ReportMetric(mb/limitTime.Seconds(), "gzip-MB/s")
	b.ReportMetric(writeTime.Seconds()/limitTime.Seconds(), "write/limit")
}

// BenchmarkReadPagesVsDecode measures ReadPages on a WACZ whose page has a
// million characters of text, next to its limit in the same iteration:
// opening the ZIP, inflating pages/pages.jsonl whole and decoding its page
// line into a struct, without ReadPages' type checks and line bound.
func BenchmarkReadPagesVsDecode(b *testing.B) {
	c := benchCapture()
	c.Pages[0].Text = strings.Repeat("桜", MaxTextRunes)
	var buf bytes.Buffer
	if _, err := Write(&buf, c); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	var readTime, limitTime time.Duration
	for b.Loop() {
		start := time.Now()
		pages, _, err := ReadPages(bytes.NewReader(data), int64(len(data)))
		if err != nil || len(pages) != 1 {
			b.Fatal(err)
		}
		readTime += time.Since(start)

		start = time.Now()
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			b.Fatal(err)
		}
		rc, err := zr.File[2].Open()
		if err != nil {
			b.Fatal(err)
		}
		all, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			b.Fatal(err)
		}
		_, line, _ := bytes.Cut(all, []byte("\n"))
		var p pageLine
		if err := json.Unmarshal(line, &p); err != nil || p.URL == "" {
			b.Fatal(err)
		}
		limitTime += time.Since(start)
	}
	b.ReportMetric(readTime.Seconds()*1000/float64(b.N), "read-ms/op")
	b.ReportMetric(limitTime.Seconds()*1000/float64(b.N), "decode-ms/op")
	b.ReportMetric(readTime.Seconds()/limitTime.Seconds(), "read/limit")
}

// BenchmarkMergeVsHash measures Merge of 1,000 one-page WACZs (the fixture
// page, about the size of a crawl's page) next to its limit in the same
// iteration: SHA-256 over every byte of the parts, which the merged
// file's datapackage needs of every byte it copies (the WARCs are most of
// them), with nothing opened, parsed or written.
func BenchmarkMergeVsHash(b *testing.B) {
	one, _ := writeWACZ(b, fixtureCapture(b))
	const n = 1000
	parts := make([]Part, n)
	for i := range parts {
		parts[i] = Part{Name: fmt.Sprintf("part-%04d", i), R: bytes.NewReader(one), Size: int64(len(one))}
	}
	created := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	var mergeTime, limitTime time.Duration
	var out int64
	for b.Loop() {
		start := time.Now()
		sum, err := Merge(io.Discard, created, "bench", "ledgerctl bench", parts, nil)
		if err != nil || sum.Parts != n {
			b.Fatal(err)
		}
		mergeTime += time.Since(start)
		out = sum.Bytes

		start = time.Now()
		h := sha256.New()
		for range n {
			h.Write(one)
		}
		h.Sum(nil)
		limitTime += time.Since(start)
	}
	b.ReportMetric(float64(len(one)), "part-bytes")
	b.ReportMetric(float64(out), "merged-bytes")
	b.ReportMetric(mergeTime.Seconds()*1000/float64(b.N), "merge-ms/op")
	b.ReportMetric(limitTime.Seconds()*1000/float64(b.N), "hash-ms/op")
	b.ReportMetric(mergeTime.Seconds()/limitTime.Seconds(), "merge/limit")
}
