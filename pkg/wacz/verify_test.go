package wacz

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// warcRecords splits a .warc.gz into its uncompressed records.
func warcRecords(t testing.TB, warc []byte) [][]byte {
	t.Helper()
	var out [][]byte
	br := bytes.NewReader(warc)
	for br.Len() > 0 {
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		rec, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

func gzipMembers(t testing.TB, records [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range records {
		zw := gzip.NewWriter(&buf)
		zw.Write(r)
		zw.Close()
	}
	return buf.Bytes()
}

// TestCheckFindsEachBreak breaks a good WACZ one way at a time and expects
// Check to name the rule it breaks.
func TestCheckFindsEachBreak(t *testing.T) {
	t.Parallel()
	good, _ := writeWACZ(t, fixtureCapture(t))
	if problems, err := Check(bytes.NewReader(good), int64(len(good))); err != nil || len(problems) != 0 {
		t.Fatalf("good WACZ: %v %v", problems, err)
	}

	edit := func(name string, f func([]byte) []byte) func([]zipEntry) []zipEntry {
		return func(es []zipEntry) []zipEntry {
			for i := range es {
				if es[i].name == name {
					es[i].data = f(slices.Clone(es[i].data))
				}
			}
			return es
		}
	}
	replace := func(name, old, new string) func([]zipEntry) []zipEntry {
		return edit(name, func(b []byte) []byte {
			if !bytes.Contains(b, []byte(old)) {
				t.Fatalf("%s has no %q", name, old)
			}
			return bytes.Replace(b, []byte(old), []byte(new), 1)
		})
	}
	drop := func(name string) func([]zipEntry) []zipEntry {
		return func(es []zipEntry) []zipEntry {
			return slices.DeleteFunc(es, func(e zipEntry) bool { return e.name == name })
		}
	}
	indexLines := func(f func([]string) []string) func([]zipEntry) []zipEntry {
		return edit(IndexPath, func(b []byte) []byte {
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			return []byte(strings.Join(f(lines), "\n") + "\n")
		})
	}
	records := func(f func([][]byte) [][]byte) func([]zipEntry) []zipEntry {
		return edit(WARCPath, func(b []byte) []byte { return gzipMembers(t, f(warcRecords(t, b))) })
	}

	for _, tc := range []struct {
		name   string
		change func([]zipEntry) []zipEntry
		rule   string
	}{
		{"resource hash", replace(PagesPath, "All Pages", "All Pagez"), "datapackage.resource-hash"},
		{"resource bytes", edit(PagesPath, func(b []byte) []byte { return append(b, '\n') }), "datapackage.resource-bytes"},
		{"resource missing", drop(IndexPath), "datapackage.resource-missing"},
		{"no index", drop(IndexPath), "index.present"},
		{"no datapackage", drop(DataPackage), "datapackage.present"},
		{"datapackage not json", edit(DataPackage, func([]byte) []byte { return []byte("[") }), "datapackage.json"},
		{"profile", replace(DataPackage, `"data-package"`, `"multi-wacz-package"`), "datapackage.profile"},
		{"no wacz_version", replace(DataPackage, `"wacz_version"`, `"version"`), "datapackage.wacz_version"},
		{"resources", replace(DataPackage, `"resources":[`, `"resources":5,"x":[`), "datapackage.resources"},
		{"unlisted", func(es []zipEntry) []zipEntry {
			return append(es, zipEntry{name: "fuzzy.json", data: []byte("{}"), method: zip.Deflate})
		}, "datapackage.resource-unlisted"},
		{"digest", replace(DigestPath, `"sha256:`, `"sha256:0`), "digest.valid"},
		{"digest path", replace(DigestPath, `"datapackage.json"`, `"other.json"`), "digest.valid"},
		{"deflated warc", func(es []zipEntry) []zipEntry { es[0].method = zip.Deflate; return es }, "zip.store"},
		{"deflated gzipped index", func(es []zipEntry) []zipEntry {
			return append(es, zipEntry{name: "indexes/index.cdx.gz", data: []byte{0x1f, 0x8b}, method: zip.Deflate})
		}, "zip.store"},
		{"no pages", drop(PagesPath), "pages.present"},
		{"pages header", edit(PagesPath, func(b []byte) []byte { _, rest, _ := bytes.Cut(b, []byte("\n")); return rest }), "pages.header"},
		{"pages ts", replace(PagesPath, `"ts":"2026-05-01T10:00:03.250Z"`, `"ts":"yesterday"`), "pages.ts"},
		{"pages entry", edit(PagesPath, func(b []byte) []byte { return append(b, `{"title":"no url"}`+"\n"...) }), "pages.entries"},
		{"page not indexed", indexLines(func(l []string) []string {
			return slices.DeleteFunc(l, func(s string) bool { return strings.Contains(s, `"url":"`+fixtureStart+`"`) })
		}), "pages.indexed"},
		{"response not indexed", indexLines(func(l []string) []string { return l[1:] }), "index.coverage"},
		{"unsorted", indexLines(func(l []string) []string { l[0], l[1] = l[1], l[0]; return l }), "cdxj.sorted"},
		{"cdxj syntax", indexLines(func(l []string) []string { return append(l, "key 123 {}") }), "cdxj.syntax"},
		{"cdxj offset", indexLines(func(l []string) []string {
			e, _ := ParseCDXJLine(l[0])
			e.Offset++
			l[0] = strings.TrimSuffix(string(e.appendLine(nil)), "\n")
			return l
		}), "cdxj.record"},
		{"cdxj length", indexLines(func(l []string) []string {
			e, _ := ParseCDXJLine(l[0])
			e.Length--
			l[0] = strings.TrimSuffix(string(e.appendLine(nil)), "\n")
			return l
		}), "cdxj.record"},
		{"cdxj url", indexLines(func(l []string) []string {
			e, _ := ParseCDXJLine(l[2])
			e.URL = fixtureCSS
			l[2] = strings.TrimSuffix(string(e.appendLine(nil)), "\n")
			return l
		}), "cdxj.record"},
		{"cdxj timestamp", indexLines(func(l []string) []string {
			e, _ := ParseCDXJLine(l[len(l)-1])
			e.Timestamp = "20260501100004"
			l[len(l)-1] = strings.TrimSuffix(string(e.appendLine(nil)), "\n")
			return l
		}), "cdxj.timestamp"},
		{"cdxj filename", indexLines(func(l []string) []string {
			l[0] = strings.Replace(l[0], `"data.warc.gz"`, `"other.warc.gz"`, 1)
			return l
		}), "cdxj.filename"},
		{"one gzip member", edit(WARCPath, func(b []byte) []byte {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(bytes.Join(warcRecords(t, b), nil))
			zw.Close()
			return buf.Bytes()
		}), "warc.gzip-members"},
		{"not gzip", edit(WARCPath, func([]byte) []byte { return []byte("WARC/1.1\r\n") }), "warc.gzip-members"},
		{"block digest", records(func(rs [][]byte) [][]byte {
			rs[5] = bytes.Replace(rs[5], []byte("background"), []byte("BACKGROUND"), 1)
			return rs
		}), "warc.record"},
		{"payload digest", records(func(rs [][]byte) [][]byte {
			// The header is outside the block, so only the payload
			// digest is wrong.
			i := bytes.Index(rs[3], []byte("WARC-Payload-Digest: sha256:")) + len("WARC-Payload-Digest: sha256:")
			if rs[3][i] == '0' {
				rs[3][i] = '1'
			} else {
				rs[3][i] = '0'
			}
			return rs
		}), "warc.record"},
		{"content length", records(func(rs [][]byte) [][]byte {
			rs[1] = bytes.Replace(rs[1], []byte("Content-Length: 115\r\n"), []byte("Content-Length: 114\r\n"), 1)
			return rs
		}), "warc.record"},
		{"version", records(func(rs [][]byte) [][]byte {
			rs[0] = bytes.Replace(rs[0], []byte("WARC/1.1"), []byte("WARC/2.0"), 1)
			return rs
		}), "warc.record"},
		{"no archive", func(es []zipEntry) []zipEntry { es[0].name = "data.warc.gz"; return es }, "archive.present"},
		{"odd archive file", func(es []zipEntry) []zipEntry {
			return append(es, zipEntry{name: "archive/notes.txt", data: []byte("x"), method: zip.Store})
		}, "layout.dirs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries := tc.change(unzip(t, good))
			b := rezip(t, entries)
			problems, err := Check(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, p := range problems {
				rules = append(rules, p.Rule)
				if p.Detail == "" {
					t.Errorf("%s without a detail", p.Rule)
				}
			}
			if !slices.Contains(rules, tc.rule) {
				t.Errorf("rules %v, want %s among them; problems %v", rules, tc.rule, problems)
			}
			var ve *VerifyError
			if err := Verify(bytes.NewReader(b), int64(len(b))); !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.rule) {
				t.Errorf("Verify = %v", err)
			}
		})
	}
}

// TestCheckIndexEitherMethod: WACZ 1.1.1 lets a plain CDXJ index be STORED
// or deflated; either passes.
func TestCheckIndexEitherMethod(t *testing.T) {
	t.Parallel()
	good, _ := writeWACZ(t, fixtureCapture(t))
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		entries := unzip(t, good)
		for i := range entries {
			if entries[i].name == IndexPath {
				entries[i].method = method
			}
		}
		b := rezip(t, entries)
		if problems, err := Check(bytes.NewReader(b), int64(len(b))); err != nil || len(problems) != 0 {
			t.Errorf("index with method %d: %v %v", method, problems, err)
		}
	}
}

func TestCheckNotZip(t *testing.T) {
	t.Parallel()
	if _, err := Check(bytes.NewReader([]byte("nope")), 4); !errors.Is(err, ErrNotZip) {
		t.Errorf("err = %v", err)
	}
	if err := Verify(bytes.NewReader(nil), 0); !errors.Is(err, ErrNotZip) {
		t.Errorf("Verify err = %v", err)
	}
	// A reader failing inside an entry is an error, not a problem of the file.
	good, _ := writeWACZ(t, fixtureCapture(t))
	boom := errors.New("connection reset")
	if _, err := Check(failingReaderAt{r: bytes.NewReader(good), from: 100, to: 101, err: boom}, int64(len(good))); !errors.Is(err, boom) {
		t.Errorf("failing reader: %v", err)
	}
}

func FuzzCheck(f *testing.F) {
	good, _ := writeWACZ(f, fixtureCapture(f))
	f.Add(good)
	entries := unzip(f, good)
	entries[0].method = zip.Deflate
	f.Add(rezip(f, entries))
	f.Add(rezip(f, []zipEntry{{name: WARCPath, data: []byte{0x1f, 0x8b, 8, 0}, method: zip.Store},
		{name: IndexPath, data: []byte("k 20260101000000 {\"url\":\"u\",\"offset\":\"0\",\"length\":\"4\",\"filename\":\"data.warc.gz\"}\n"), method: zip.Store}}))
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, data []byte) {
		problems, err := Check(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if !errors.Is(err, ErrNotZip) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		for _, p := range problems {
			if p.Rule == "" || p.Detail == "" {
				t.Fatalf("empty problem %+v", p)
			}
		}
	})
}
