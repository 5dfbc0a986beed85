package wacz

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// TestMerge: two captures merged are one WACZ that Check accepts, holding
// both WARCs byte for byte under new names, every index line pointing at
// the renamed file (sorted as one index), and both pages; the second is a
// revisit of the first's stylesheet, whose original is now in the same
// WACZ.
func TestMerge(t *testing.T) {
	first := fixtureCapture(t)
	second := fixtureCapture(t)
	second.Created = second.Created.Add(time.Hour)
	for i := range second.Exchanges {
		second.Exchanges[i].Date = second.Exchanges[i].Date.Add(time.Hour)
	}
	second.Pages[0].Date = second.Pages[0].Date.Add(time.Hour)
	second.Exchanges[2].Revisit = &Revisit{RefersToURI: fixtureCSS, RefersToDate: first.Exchanges[2].Date, Container: "a.wacz"}
	a, _ := writeWACZ(t, first)
	b, _ := writeWACZ(t, second)
	var out bytes.Buffer
	created := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	// b is opened when it is read, once for its WARC, index and pages, as
	// an export opens archives from the bucket.
	opens := 0
	sum, err := Merge(&out, created, "crawl 1", "ledgerctl test", []Part{
		{Name: "a", R: bytes.NewReader(a), Size: int64(len(a))},
		{Name: "b", Open: func() (io.ReaderAt, int64, error) { opens++; return bytes.NewReader(b), int64(len(b)), nil }},
	}, nil)
	if opens != 1 {
		t.Errorf("b was opened %d times, want once", opens)
	}
	if err != nil {
		t.Fatal(err)
	}
	merged := out.Bytes()
	if problems, err := Check(bytes.NewReader(merged), int64(len(merged))); err != nil || len(problems) > 0 {
		t.Fatalf("Check: %v %v", problems, err)
	}
	if sum.Parts != 2 || sum.WARCs != 2 || sum.Pages != 2 || sum.Bytes != int64(len(merged)) {
		t.Errorf("summary %+v", sum)
	}
	entries := unzip(t, merged)
	for part, src := range map[string][]byte{"a": a, "b": b} {
		if got, want := entry(t, entries, "archive/"+part+"-data.warc.gz"), mustEntry(t, src, WARCPath); !bytes.Equal(got, want) {
			t.Errorf("part %s: its WARC changed in the merge", part)
		}
	}
	index := strings.Split(strings.TrimSpace(string(entry(t, entries, IndexPath))), "\n")
	want := len(strings.Split(strings.TrimSpace(string(mustEntry(t, a, IndexPath))), "\n")) +
		len(strings.Split(strings.TrimSpace(string(mustEntry(t, b, IndexPath))), "\n"))
	if len(index) != want || sum.IndexLines != want {
		t.Fatalf("%d index lines (summary %d), want %d", len(index), sum.IndexLines, want)
	}
	revisits := 0
	for i, line := range index {
		e, err := ParseCDXJLine(line)
		if err != nil {
			t.Fatal(err)
		}
		if e.Filename != "a-data.warc.gz" && e.Filename != "b-data.warc.gz" {
			t.Errorf("line %d names %q", i, e.Filename)
		}
		if i > 0 {
			prev, _ := ParseCDXJLine(index[i-1])
			if prev.sortKey() > e.sortKey() {
				t.Errorf("line %d is out of order", i)
			}
		}
		if e.Mime == "warc/revisit" {
			revisits++
			if e.Filename != "b-data.warc.gz" {
				t.Errorf("the revisit is indexed in %s", e.Filename)
			}
		}
	}
	if revisits != 1 {
		t.Errorf("%d revisits indexed, want 1", revisits)
	}
	pages := strings.Split(strings.TrimSpace(string(entry(t, entries, PagesPath))), "\n")
	if len(pages) != 3 || !strings.Contains(pages[0], `"format"`) {
		t.Errorf("pages.jsonl: %q", pages)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.name, "screenshots/") || strings.HasPrefix(e.name, "thumbnail") {
			t.Errorf("the merge kept %s", e.name)
		}
	}
	// The first part's first page opens the collection; every entry,
	// copied or written, is dated to the merge.
	var dp dataPackageFile
	if err := json.Unmarshal(entry(t, entries, DataPackage), &dp); err != nil || dp.MainPageURL != fixtureStart || dp.Title != "crawl 1" || len(dp.Resources) != 4 {
		t.Errorf("datapackage.json: %+v %v", dp, err)
	}
	zr, err := zip.NewReader(bytes.NewReader(merged), int64(len(merged)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if !f.Modified.Equal(created) || f.ModTime().Year() != 2026 {
			t.Errorf("%s dated %v (MS-DOS %v), want %v", f.Name, f.Modified, f.ModTime(), created)
		}
	}
}

var errGone = errors.New("the object is gone")

// TestMergeRefusals: what Merge cannot read is refused, naming the part,
// and nothing else is taken for a part.
func TestMergeRefusals(t *testing.T) {
	good, _ := writeWACZ(t, fixtureCapture(t))
	part := func(name string, b []byte) Part { return Part{Name: name, R: bytes.NewReader(b), Size: int64(len(b))} }
	entries := unzip(t, good)
	with := func(name string, data []byte) []byte {
		var es []zipEntry
		for _, e := range entries {
			if e.name == name {
				e.data = data
			}
			es = append(es, e)
		}
		return rezip(t, es)
	}
	without := func(name string) []byte {
		var es []zipEntry
		for _, e := range entries {
			if e.name != name {
				es = append(es, e)
			}
		}
		return rezip(t, es)
	}
	zipNum := append(unzip(t, without(IndexPath)), zipEntry{name: "indexes/index.cdx.gz", data: []byte("x")})
	// The part's WARC stored with a checksum its bytes do not have: a
	// reader of the part would refuse it, and so does the merge, rather
	// than copy it on.
	var badCRC bytes.Buffer
	zw := zip.NewWriter(&badCRC)
	for _, e := range entries {
		if e.name != WARCPath {
			w, _ := zw.Create(e.name)
			w.Write(e.data)
			continue
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: e.name, Method: zip.Store, CRC32: 1, CompressedSize64: uint64(len(e.data)), UncompressedSize64: uint64(len(e.data))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		parts []Part
		want  string
	}{
		{"a name with a slash", []Part{part("a/b", good)}, `name "a/b"`},
		{"an empty name", []Part{part("", good)}, `name ""`},
		{"one name twice", []Part{part("a", good), part("a", good)}, `two parts are named "a"`},
		{"not a ZIP", []Part{part("a", good), part("junk", []byte("not a zip"))}, "junk: not a ZIP"},
		{"a part that cannot be opened", []Part{{Name: "gone", Open: func() (io.ReaderAt, int64, error) { return nil, 0, errGone }}}, "gone: the object is gone"},
		{"no index", []Part{part("a", without(IndexPath))}, "a: no CDXJ index"},
		{"a ZipNum index", []Part{part("a", rezip(t, zipNum))}, "compressed (ZipNum)"},
		{"an index line of another file", []Part{part("a", with(IndexPath, bytes.ReplaceAll(mustEntry(t, good, IndexPath), []byte("data.warc.gz"), []byte("other.warc.gz"))))}, `filename "other.warc.gz"`},
		{"an index line that is not one", []Part{part("a", with(IndexPath, []byte("not an index line\n")))}, "a: indexes/index.cdxj: line 1"},
		{"a page that is not JSON", []Part{part("a", with(PagesPath, []byte("{\"format\":\"json-pages-1.0\"}\n[1,2]\n")))}, "line 2 is not a page"},
		{"a WARC whose bytes fail its checksum", []Part{part("a", badCRC.Bytes())}, "checksum error"},
		{"a WARC of an odd name", []Part{part("a", rezip(t, append(unzip(t, good), zipEntry{name: "archive/a b.warc.gz", data: []byte("x")})))}, `"archive/a b.warc.gz" is not a plain file name`},
		{"two WARCs of one name", []Part{part("a", rezip(t, append(unzip(t, good), zipEntry{name: WARCPath, data: []byte("x")})))}, "names a second WARC file"},
		{"a page without a url", []Part{part("a", with(PagesPath, []byte("{\"id\":\"x\"}\n")))}, "line 1 is not a page"},
		{"a page whose url is not a string", []Part{part("a", with(PagesPath, []byte("{\"url\":\"\"}\n{\"url\":7}\n")))}, "line 1 is not a page"},
		{"a page line too long", []Part{part("a", with(PagesPath, []byte("{\"url\":\""+strings.Repeat("x", maxMergePageLine)+"\"}\n")))}, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := Merge(&out, time.Now(), "t", "s", tc.parts, nil)
			if errors.Is(err, errGone) == errors.Is(err, ErrMergeInput) {
				t.Errorf("error %v: ErrMergeInput for what the part holds, and only for that", err)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
			// A first part's malformed page list is found before anything
			// is written (a download can still answer an error).
			if strings.Contains(tc.want, "is not a page") && out.Len() != 0 {
				t.Errorf("%d bytes written before the page list was refused", out.Len())
			}
		})
	}
}

// FuzzMerge: whatever bytes a part holds, Merge refuses them or writes a
// WACZ that Check accepts; it never panics.
func FuzzMerge(f *testing.F) {
	good, _ := writeWACZ(f, fixtureCapture(f))
	f.Add(good)
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var out bytes.Buffer
		if _, err := Merge(&out, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "t", "s", []Part{{Name: "p", R: bytes.NewReader(b), Size: int64(len(b))}}, nil); err != nil {
			return
		}
		if problems, err := Check(bytes.NewReader(out.Bytes()), int64(out.Len())); err != nil || len(problems) > 0 {
			t.Fatalf("merged WACZ fails Check: %v %v", problems, err)
		}
	})
}
