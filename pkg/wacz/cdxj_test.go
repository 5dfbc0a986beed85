package wacz

import (
	"strings"
	"testing"
)

func TestParseCDXJLine(t *testing.T) {
	t.Parallel()
	e, err := ParseCDXJLine(`com,example)/ 20260501100003 {"url":"https://example.com/","mime":"text/html","status":"200","digest":"sha256:ab","length":"665","offset":"1089","filename":"data.warc.gz"}` + "\n")
	if err != nil {
		t.Fatal(err)
	}
	want := CDXJEntry{Key: "com,example)/", Timestamp: "20260501100003", URL: "https://example.com/", Mime: "text/html",
		Status: 200, Digest: "sha256:ab", Offset: 1089, Length: 665, Filename: "data.warc.gz"}
	if e != want {
		t.Errorf("got %+v\nwant %+v", e, want)
	}
	// warcio.js writes numbers and 17-digit timestamps; status may be absent.
	e, err = ParseCDXJLine(`com,example)/ 20260501100003123 {"url":"u","offset":0,"length":12,"filename":"a.warc"}`)
	if err != nil || e.Offset != 0 || e.Length != 12 || e.Status != 0 || e.Timestamp != "20260501100003123" {
		t.Errorf("numbers: %+v %v", e, err)
	}

	for _, tc := range []struct{ line, want string }{
		{``, "no key"},
		{`key`, "no key"},
		{`key 20260501100003`, "no JSON block"},
		{`key 2026050110000 {}`, "timestamp"},
		{`key 2026050110000x {}`, "timestamp"},
		{`key 20260501100003 []`, "not a JSON object"},
		{`key 20260501100003 {"url":1}`, `"url" is not a string`},
		{`key 20260501100003 {"offset":"1","length":"1","filename":"f"}`, `"url" is missing`},
		{`key 20260501100003 {"url":"","offset":"1","length":"1","filename":"f"}`, `"url" is empty`},
		{`key 20260501100003 {"url":"u","length":"1","filename":"f"}`, `"offset" is missing`},
		{`key 20260501100003 {"url":"u","offset":"-1","length":"1","filename":"f"}`, `"offset" is not a non-negative integer`},
		{`key 20260501100003 {"url":"u","offset":1.5,"length":"1","filename":"f"}`, `"offset" is not a non-negative integer`},
		{`key 20260501100003 {"url":"u","offset":"1","length":"99999999999999999999","filename":"f"}`, `"length" is out of range`},
		{`key 20260501100003 {"url":"u","offset":"1","length":"1"}`, `"filename" is missing`},
		{`key 20260501100003 {"url":"u","offset":"1","length":"1","filename":"f","status":"2000"}`, `"status"`},
		{`key 20260501100003 {"url":"u","offset":"1","length":"1","filename":"f","mime":5}`, `"mime" is not a string`},
	} {
		_, err := ParseCDXJLine(tc.line)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCDXJLine(%q) = %v, want an error with %q", tc.line, err, tc.want)
		}
	}
}

func FuzzParseCDXJLine(f *testing.F) {
	for _, s := range []string{
		`com,example)/ 20260501100003 {"url":"https://example.com/","mime":"text/html","status":"200","digest":"sha256:ab","length":"665","offset":"1089","filename":"data.warc.gz"}`,
		`k 20260501100003123 {"url":"u","offset":0,"length":12,"filename":"a.warc","status":404}`,
		`k 20260501100003 {"url":"u","offset":"0x1","length":"1","filename":"f"}`,
		`k 20260501100003 {"url":"\u0000","offset":"1","length":"1","filename":"\xff"}`,
		"k 20260501100003 {\"url\":\"u\"} extra",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		e, err := ParseCDXJLine(line)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "cdxj: ") {
				t.Fatalf("error %q lacks the cdxj prefix", err)
			}
			return
		}
		if e.URL == "" || e.Filename == "" || e.Offset < 0 || e.Length < 0 || e.Status < 0 || e.Status > 999 {
			t.Fatalf("accepted %+v", e)
		}
		// What Write would emit for it reads back the same when the key
		// has no separator in it.
		if strings.ContainsAny(e.Key, " \r\n") {
			return
		}
		again, err := ParseCDXJLine(string(e.appendLine(nil)))
		if err != nil || again != e {
			t.Fatalf("round trip of %+v: %+v, %v", e, again, err)
		}
	})
}
