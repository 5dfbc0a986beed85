package replay

import (
	"context"
	"errors"
	"testing"
)

// namedCatalog names objects from a map; fail makes naming fail.
type namedCatalog struct {
	names map[string]string
	fail  error
}

func (c namedCatalog) ArchiveLocation(context.Context, string) (string, string, error) {
	return "", "", errors.New("not used")
}

func (c namedCatalog) CrawlArchives(context.Context, string, int) ([]string, error) { return nil, nil }

func (c namedCatalog) ArchiveObjectNames(_ context.Context, ids []string) (map[string]string, error) {
	if c.fail != nil {
		return nil, c.fail
	}
	out := map[string]string{}
	for _, id := range ids {
		if n, ok := c.names[id]; ok {
			out[id] = n
		}
	}
	return out, nil
}

type plainCatalog struct{ namedCatalog }

func (plainCatalog) ArchiveObjectNames() {} // not an ObjectNamer

// TestCollectionNames: a collection names each WACZ by its object's name
// (what revisit records name their original's WACZ by), and falls back to
// `<id>.wacz` for an archive the catalog does not name, a name that is not
// a plain .wacz file name (a path, a control character, another
// extension) and a name two archives share.
func TestCollectionNames(t *testing.T) {
	t.Parallel()
	ids := []string{"a", "b", "c", "d", "e", "f", "g"}
	cat := namedCatalog{names: map[string]string{
		"a": "task-a_crawl.wacz",
		"b": "../b.wacz",
		"c": "c\r\n.wacz",
		"d": "d.warc",
		"e": "same.wacz",
		"f": "same.wacz",
	}}
	got, err := (&Service{Catalog: cat}).collectionNames(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "task-a_crawl.wacz", "b": "b.wacz", "c": "c.wacz", "d": "d.wacz", "e": "e.wacz", "f": "f.wacz", "g": "g.wacz"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s is named %q, want %q", id, got[id], w)
		}
	}
	if _, err := (&Service{Catalog: namedCatalog{fail: errors.New("down")}}).collectionNames(context.Background(), ids); err == nil {
		t.Error("a catalog that cannot name: no error")
	}
	got, err = (&Service{Catalog: plainCatalog{}}).collectionNames(context.Background(), []string{"a"})
	if err != nil || got["a"] != "a.wacz" {
		t.Errorf("a catalog that does not name: %v %v", got, err)
	}
}
