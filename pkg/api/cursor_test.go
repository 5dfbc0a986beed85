package api

import (
	"net/url"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
)

func TestParseArchiveCursor(t *testing.T) {
	for _, tc := range []struct {
		q       string
		wantErr bool
		wantID  string
	}{
		{"", false, ""},
		{"before=2026-12-01T10:00:00Z", false, "ffffffff-ffff-ffff-ffff-ffffffffffff"},
		{"before=2026-12-01T10:00:00.123456Z&beforeId=0B6B2C4E-3F5A-4C1E-9D7A-2F1E0C9B8A71", false, "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71"},
		{"beforeId=0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", true, ""},
		{"before=yesterday", true, ""},
		{"before=2026-12-01T10:00:00Z&beforeId=nope", true, ""},
		{"before=2026-12-01T10:00:00Z&before=2026-12-02T10:00:00Z", true, ""},
	} {
		q, _ := url.ParseQuery(tc.q)
		c, err := ParseArchiveCursor(q)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v", tc.q, err)
			continue
		}
		if err == nil && tc.wantID != "" && (c == nil || c.ID != tc.wantID) {
			t.Errorf("%q: cursor %+v", tc.q, c)
		}
	}
}

func FuzzParseArchiveCursor(f *testing.F) {
	f.Add("2026-12-01T10:00:00Z", "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71")
	f.Add("", "")
	f.Add("not a date", "{}")
	f.Fuzz(func(t *testing.T, before, id string) {
		q := url.Values{}
		if before != "" {
			q.Set("before", before)
		}
		if id != "" {
			q.Set("beforeId", id)
		}
		c, err := ParseArchiveCursor(q)
		if err != nil {
			if _, ok := err.(*BadRequest); !ok {
				t.Fatalf("not a 400: %T %v", err, err)
			}
			return
		}
		if c == nil {
			if before != "" {
				t.Fatal("a before value was ignored")
			}
			return
		}
		// The cursor the API hands back parses to the same position.
		back := NewArchivePage(archivePageWith(c))
		q2 := url.Values{"before": {back.Next.Before}, "beforeId": {back.Next.BeforeID}}
		c2, err := ParseArchiveCursor(q2)
		if err != nil || !c2.CapturedAt.Equal(c.CapturedAt) || c2.ID != c.ID {
			t.Fatalf("round trip %+v -> %+v (%v)", c, c2, err)
		}
	})
}

func archivePageWith(c *archive.Cursor) archive.Page { return archive.Page{Next: c} }
