package capture

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/iotest"
)

// TestBudgetRead: a body read in place is the bytes sent whatever the
// Content-Length said (right, too small, too large, absent), in small
// reads or large, and the caps cut it where they say.
func TestBudgetRead(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("0123456789abcdef"), 5000) // 80,000 bytes
	n := int64(len(data))
	for _, c := range []struct {
		name              string
		hint              int64
		maxBody, pageLeft int64
		oneByte           bool
		want              int64
		why               cut
	}{
		{"exact length", n, 1 << 20, 1 << 20, false, n, cutNone},
		{"no length", -1, 1 << 20, 1 << 20, false, n, cutNone},
		{"no length, one byte at a time", -1, 1 << 20, 1 << 20, true, n, cutNone},
		{"length too small", 10, 1 << 20, 1 << 20, false, n, cutNone},
		{"length too large", 10 * n, 1 << 20, 1 << 20, false, n, cutNone},
		{"zero length, body sent", 0, 1 << 20, 1 << 20, false, n, cutNone},
		{"body cap", n, 1000, 1 << 20, false, 1000, cutBody},
		{"body cap, no length", -1, 1000, 1 << 20, true, 1000, cutBody},
		{"page cap", -1, 1 << 20, 777, false, 777, cutPage},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &budget{maxBody: c.maxBody, pageLeft: c.pageLeft}
			var r io.Reader = bytes.NewReader(data)
			if c.oneByte {
				r = iotest.OneByteReader(r)
			}
			got, why, err := b.read(r, c.hint)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(got)) != c.want || why != c.why || !bytes.Equal(got, data[:len(got)]) {
				t.Fatalf("read %d bytes (cut %d), want the first %d (cut %d)", len(got), why, c.want, c.why)
			}
			if left := c.pageLeft - c.want; b.pageLeft != left {
				t.Errorf("page budget left %d, want %d", b.pageLeft, left)
			}
		})
	}
	// A reader failing midway: the error, with what arrived.
	b := &budget{maxBody: 1 << 20, pageLeft: 1 << 20}
	got, _, err := b.read(iotest.TimeoutReader(bytes.NewReader(data)), n)
	if err == nil || len(got) == 0 {
		t.Fatalf("read of a failing reader: %d bytes, err %v; want some bytes and the error", len(got), err)
	}
}

// TestHTTPEngineCookies: a cookie the page sets goes with the requests for
// what it names (the jar is made when the first cookie arrives), and a page
// setting none sends none.
func TestHTTPEngineCookies(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /with", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1", Path: "/"})
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><img src="/img"></body></html>`)
	})
	mux.HandleFunc("GET /without", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><img src="/img"></body></html>`)
	})
	mux.HandleFunc("GET /img", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err != nil || c.Value != "s1" {
			http.Error(w, "no cookie", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "image/gif")
		io.WriteString(w, "GIF89a")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	e := NewHTTP(localConfig())
	defer e.Close()
	for page, want := range map[string]int{"/with": http.StatusOK, "/without": http.StatusForbidden} {
		res := mustCapture(t, e, srv.URL+page)
		i, ok := exchangeFor(res, srv.URL+"/img")
		if !ok || res.Capture.Exchanges[i].Status != want {
			t.Errorf("%s: the image answered %v (recorded %v), want %d", page, res.Capture.Exchanges[i].Status, ok, want)
		}
	}
}
