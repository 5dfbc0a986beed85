package api_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// thumbWACZ writes a one-page WACZ with the given pictures.
func thumbWACZ(t *testing.T, shot []byte, thumb *wacz.Thumbnail) []byte {
	t.Helper()
	at := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	page := "https://thumb.example/"
	c := wacz.Capture{
		Created: at,
		Exchanges: []wacz.Exchange{{URL: page, Date: at, Status: 200, Header: http.Header{"Content-Type": {"text/html"}},
			Body: []byte("<title>t</title><p>hello</p>")}},
		Pages: []wacz.Page{{URL: page, Date: at, Title: "t", Text: "hello"}},
	}
	if shot != nil {
		c.Screenshot = &wacz.Screenshot{PageURL: page, Date: at, PNG: shot}
	}
	if thumb != nil {
		thumb.PageURL, thumb.Date = page, at
		c.Thumbnail = thumb
	}
	var buf bytes.Buffer
	if _, err := wacz.Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// admitWACZ puts data in the bucket and admits it for org acme (owner
// alice), delivering its tuples.
func admitWACZ(t *testing.T, env *apptest.Env, data []byte) string {
	t.Helper()
	id, _ := admitArchive(t, env, testArchive{Key: "org/acme/2026-11/<task>_c0ffee00.wacz", ContentType: "application/wacz+zip", SourceURL: "https://thumb.example/", Org: "acme", Owner: "alice", Body: data})
	drainOutbox(t, env, 1)
	return id
}

func jpegOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 200, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type thumbResp struct {
	status int
	header http.Header
	body   []byte
}

// TestArchiveThumbnail: GET /api/archives/{id}/thumbnail over a real
// ledger, bucket and OpenFGA: the picture for those who may view the
// archive, with the headers that keep archived bytes inert; the same 404
// for another organization and for an absent archive; "no thumbnail" only
// for a viewer of an archive without a (valid) one, including an archive
// whose screenshot record holds a script instead of a PNG.
func TestArchiveThumbnail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	thumb := jpegOf(t, 400, 250)
	withThumb := admitWACZ(t, env, thumbWACZ(t, nil, &wacz.Thumbnail{Mime: "image/jpeg", Data: thumb}))
	bare := admitWACZ(t, env, thumbWACZ(t, nil, nil))
	// wacz.Write checks a thumbnail but stores a screenshot as given: an
	// archive whose urn:view: record claims image/png and holds HTML.
	hostile := admitWACZ(t, env, thumbWACZ(t, []byte("<html><script>alert(document.domain)</script></html>"), nil))

	access, err := env.App.Access(ctx)
	if err != nil {
		t.Fatal(err)
	}
	perms := app.Permissions{Client: env.FGA, Now: time.Now}
	srv := serve(t, &api.Server{Access: access, Identity: identity.Headers{}, Submitters: perms})
	get := func(id, subject, orgs string) thumbResp {
		t.Helper()
		a := send(t, "GET", srv.URL+"/api/archives/"+id+"/thumbnail", subject, orgs, "")
		return thumbResp{a.status, a.header, a.body}
	}

	// A member of the organization, and the owner, get the exact bytes.
	for _, who := range [][2]string{{"bob", "acme"}, {"alice", ""}} {
		r := get(withThumb, who[0], who[1])
		if r.status != 200 || !bytes.Equal(r.body, thumb) {
			t.Fatalf("%s: %d %q", who[0], r.status, r.body)
		}
		for k, v := range map[string]string{
			"Content-Type":            "image/jpeg",
			"X-Content-Type-Options":  "nosniff",
			"Content-Security-Policy": "default-src 'none'; sandbox",
			"Cache-Control":           "private, max-age=300",
		} {
			if got := r.header.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", who[0], k, got, v)
			}
		}
	}

	// Another organization's member gets what an absent id gets.
	outsider := get(withThumb, "carol", "contoso")
	absent := get(uuid.NewString(), "bob", "acme")
	if outsider.status != 404 || string(outsider.body) != string(absent.body) || absent.status != 404 ||
		string(bytes.TrimSpace(outsider.body)) != `{"error":"not found"}` {
		t.Errorf("outsider %d %s, absent %d %s", outsider.status, outsider.body, absent.status, absent.body)
	}
	// Nor does an outsider learn which archives have no thumbnail.
	if r := get(bare, "carol", "contoso"); r.status != 404 || string(r.body) != string(absent.body) {
		t.Errorf("outsider, bare archive: %d %s", r.status, r.body)
	}

	// A viewer of an archive without a picture, or with a hostile one.
	for name, id := range map[string]string{"bare": bare, "hostile": hostile} {
		r := get(id, "bob", "acme")
		if r.status != 404 || string(bytes.TrimSpace(r.body)) != `{"error":"no thumbnail"}` {
			t.Errorf("%s: %d %s %s", name, r.status, r.header.Get("Content-Type"), r.body)
		}
		if bytes.Contains(r.body, []byte("<script")) {
			t.Errorf("%s: served the script", name)
		}
	}

	// Input before identity; identity before anything else.
	if r := get("not-a-uuid", "bob", "acme"); r.status != 400 {
		t.Errorf("bad id: %d %s", r.status, r.body)
	}
	if r := get(withThumb, "", ""); r.status != 401 {
		t.Errorf("no identity: %d %s", r.status, r.body)
	}
}
