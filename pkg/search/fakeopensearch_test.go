package search_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// No OpenSearch server can be installed here, so the OpenSearch backend is
// tested against this stand-in: an HTTP server implementing the endpoints
// the backend calls (index exists / create, _bulk, _delete_by_query,
// _search, _mget). It refuses any request body it does not expect — the
// index must be created with search.OpenSearchMapping, and queries must have
// exactly the shape the backend is meant to send — and evaluates queries
// with a small matcher of its own: match_phrase over title and text with the
// CJK bigram analyzer, and over title.en and text.en with the English one
// (Bleve's analyzers standing in for OpenSearch's built-in cjk and english),
// scored by boost × occurrences as a float32 like OpenSearch's scores,
// sorted by score then docId, with search_after. It is good enough for the
// conformance suite, not a model of OpenSearch's relevance.
type fakeOpenSearch struct {
	t     testing.TB
	index string

	mu       sync.Mutex
	created  bool
	mapped   map[string]bool           // the index's fields (dynamic: strict)
	docs     map[string]map[string]any // _id → _source
	requests map[string]int            // "POST _search" → count
	bodies   []map[string]any          // the _search bodies received, in order
}

func newFakeOpenSearch(t testing.TB, index string) (*fakeOpenSearch, *httptest.Server) {
	f := &fakeOpenSearch{t: t, index: index, docs: map[string]map[string]any{}, requests: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv
}

var fakeCJK, fakeEN = fakeAnalyzer(cjk.AnalyzerName), fakeAnalyzer(en.AnalyzerName)

func fakeAnalyzer(name string) analysis.Analyzer {
	a, err := registry.NewCache().AnalyzerNamed(name)
	if err != nil {
		panic(err)
	}
	return a
}

func (f *fakeOpenSearch) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[key]
}

func (f *fakeOpenSearch) searchBodies() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}

func (f *fakeOpenSearch) fail(w http.ResponseWriter, status int, typ, format string, args ...any) {
	reason := fmt.Sprintf(format, args...)
	f.t.Errorf("fake OpenSearch refused a request: %s: %s", typ, reason)
	writeFake(w, status, map[string]any{"error": map[string]any{"type": typ, "reason": reason}, "status": status})
}

func writeFake(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeOpenSearch) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/")
	idx, op, _ := strings.Cut(path, "/")
	f.requests[r.Method+" "+op]++
	// The client's own housekeeping (not the backend's requests): its
	// health check reads the cluster's info at /, and falls back to it
	// when the node statistics it asks for first are not there.
	switch {
	case path == "" && r.Method == http.MethodGet:
		writeFake(w, 200, map[string]any{"name": "fake-node", "cluster_name": "fake", "version": map[string]any{"number": "2.19.0", "distribution": "opensearch"}})
		return
	case strings.HasPrefix(path, "_nodes") || strings.HasPrefix(path, "_cluster"):
		writeFake(w, 404, map[string]any{"error": "not implemented by the fake", "status": 404})
		return
	}
	if idx != f.index {
		f.fail(w, 400, "illegal_argument_exception", "index %q, want %q", idx, f.index)
		return
	}
	body, _ := io.ReadAll(r.Body)
	q := r.URL.Query()
	switch {
	case op == "" && r.Method == http.MethodHead:
		if f.created {
			w.WriteHeader(200)
		} else {
			w.WriteHeader(404)
		}
	case op == "" && r.Method == http.MethodPut:
		f.create(w, body)
	case op == "_mapping" && r.Method == http.MethodPut:
		f.putMapping(w, body)
	case op == "_bulk" && r.Method == http.MethodPost:
		if q.Get("refresh") != "true" || r.Header.Get("Content-Type") != "application/x-ndjson" {
			f.fail(w, 400, "illegal_argument_exception", "bulk without refresh=true or ndjson: %v %q", q, r.Header.Get("Content-Type"))
			return
		}
		f.bulk(w, body)
	case op == "_delete_by_query" && r.Method == http.MethodPost:
		f.deleteByQuery(w, body, q.Get("refresh") == "true")
	case op == "_search" && r.Method == http.MethodPost:
		if q.Get("ignore_unavailable") != "true" {
			f.fail(w, 400, "illegal_argument_exception", "search without ignore_unavailable=true")
			return
		}
		f.search(w, body)
	case op == "_mget" && r.Method == http.MethodPost:
		f.mget(w, body)
	default:
		f.fail(w, 405, "unsupported", "%s %s", r.Method, r.URL.Path)
	}
}

func (f *fakeOpenSearch) create(w http.ResponseWriter, body []byte) {
	if f.created {
		writeFake(w, 400, map[string]any{"error": map[string]any{"type": "resource_already_exists_exception"}, "status": 400})
		return
	}
	var got, want any
	wb, _ := json.Marshal(search.OpenSearchMapping())
	_ = json.Unmarshal(wb, &want)
	if err := json.Unmarshal(body, &got); err != nil || !reflect.DeepEqual(got, want) {
		f.fail(w, 400, "mapper_parsing_exception", "mapping %s", body)
		return
	}
	// As the original mapping: title and text with the built-in cjk analyzer.
	props := got.(map[string]any)["mappings"].(map[string]any)["properties"].(map[string]any)
	for _, field := range []string{"title", "text"} {
		if a := props[field].(map[string]any)["analyzer"]; a != "cjk" {
			f.fail(w, 400, "mapper_parsing_exception", "%s analyzer %v, want cjk", field, a)
			return
		}
	}
	f.created = true
	f.mapped = mappedFields()
	writeFake(w, 200, map[string]any{"acknowledged": true, "index": f.index})
}

// createOld stands for an index an earlier version created: the mapping
// without grantees, and documents without them.
func (f *fakeOpenSearch) createOld(docs map[string]map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = true
	f.mapped = mappedFields()
	delete(f.mapped, "grantees")
	for id, src := range docs {
		f.docs[id] = src
	}
}

// putMapping adds fields to the mapping, as OpenSearch's PUT _mapping does
// (a field already there must keep its type; only grantees is expected).
func (f *fakeOpenSearch) putMapping(w http.ResponseWriter, body []byte) {
	if !f.created {
		writeFake(w, 404, map[string]any{"error": map[string]any{"type": "index_not_found_exception"}, "status": 404})
		return
	}
	var got map[string]any
	want := map[string]any{"properties": map[string]any{"grantees": map[string]any{"type": "keyword"}}}
	if err := json.Unmarshal(body, &got); err != nil || !reflect.DeepEqual(got, want) {
		f.fail(w, 400, "mapper_parsing_exception", "put mapping %s", body)
		return
	}
	f.mapped["grantees"] = true
	writeFake(w, 200, map[string]any{"acknowledged": true})
}

// mappedFields are the properties of OpenSearchMapping; the index is
// "dynamic": "strict", so any other field fails the document.
func mappedFields() map[string]bool {
	props := search.OpenSearchMapping()["mappings"].(map[string]any)["properties"].(map[string]any)
	out := map[string]bool{}
	for k := range props {
		out[k] = true
	}
	return out
}

func (f *fakeOpenSearch) bulk(w http.ResponseWriter, body []byte) {
	if !f.created {
		f.fail(w, 404, "index_not_found_exception", "bulk before the index was created")
		return
	}
	mapped := f.mapped
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 64<<20)
	var items []any
	hasErr := false
	for sc.Scan() {
		var action map[string]map[string]any
		if err := json.Unmarshal(sc.Bytes(), &action); err != nil || len(action) != 1 || action["index"] == nil {
			f.fail(w, 400, "illegal_argument_exception", "bulk action %s", sc.Bytes())
			return
		}
		id, _ := action["index"]["_id"].(string)
		if !sc.Scan() {
			f.fail(w, 400, "illegal_argument_exception", "bulk action without a source")
			return
		}
		var src map[string]any
		if err := json.Unmarshal(sc.Bytes(), &src); err != nil || id == "" {
			f.fail(w, 400, "illegal_argument_exception", "bulk source %s", sc.Bytes())
			return
		}
		status := 201
		var itemErr any
		for k := range src {
			if !mapped[k] {
				status, hasErr = 400, true
				itemErr = map[string]any{"type": "strict_dynamic_mapping_exception", "reason": "field " + k}
			}
		}
		if src["docId"] != id {
			status, hasErr = 400, true
			itemErr = map[string]any{"type": "illegal_argument_exception", "reason": "docId differs from _id"}
		}
		if status == 201 {
			f.docs[id] = src
		}
		items = append(items, map[string]any{"index": map[string]any{"_id": id, "status": status, "error": itemErr}})
	}
	writeFake(w, 200, map[string]any{"took": 1, "errors": hasErr, "items": items})
}

func (f *fakeOpenSearch) deleteByQuery(w http.ResponseWriter, body []byte, refresh bool) {
	type stale struct {
		Bool struct {
			Filter []struct {
				Term  map[string]string `json:"term"`
				Range map[string]struct {
					Gte *int `json:"gte"`
				} `json:"range"`
			} `json:"filter"`
		} `json:"bool"`
	}
	var req struct {
		Query struct {
			Bool struct {
				Should             []stale `json:"should"`
				MinimumShouldMatch int     `json:"minimum_should_match"`
			} `json:"bool"`
		} `json:"query"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || !refresh || len(req.Query.Bool.Should) == 0 || req.Query.Bool.MinimumShouldMatch != 1 {
		f.fail(w, 400, "parsing_exception", "delete_by_query %s (refresh %v): %v", body, refresh, err)
		return
	}
	from := map[string]int{} // archive → first page to delete
	for _, s := range req.Query.Bool.Should {
		if len(s.Bool.Filter) != 2 || s.Bool.Filter[0].Term["archiveId"] == "" || s.Bool.Filter[1].Range["page"].Gte == nil {
			f.fail(w, 400, "parsing_exception", "delete_by_query %s", body)
			return
		}
		from[s.Bool.Filter[0].Term["archiveId"]] = *s.Bool.Filter[1].Range["page"].Gte
	}
	deleted := 0
	for id, src := range f.docs {
		if gte, ok := from[src["archiveId"].(string)]; ok && int(src["page"].(float64)) >= gte {
			delete(f.docs, id)
			deleted++
		}
	}
	writeFake(w, 200, map[string]any{"deleted": deleted, "failures": []any{}})
}

// fakeSearch is the only search body the backend is meant to send.
type fakeSearch struct {
	Size           int   `json:"size"`
	Source         *bool `json:"_source"`
	TrackTotalHits bool  `json:"track_total_hits"`
	Query          fakeQ `json:"query"`
	Sort           []any `json:"sort"`
	SearchAfter    []any `json:"search_after"`
}

type fakeQ struct {
	Bool struct {
		// Filter is in filter context (no score): the caller's narrowing,
		// a bool of terms queries one of which must match; and, for the
		// collapse's question (Among), a term query on url and a terms
		// query on archiveId.
		Filter []struct {
			Bool *struct {
				Should []struct {
					Terms map[string][]string `json:"terms"`
				} `json:"should"`
				MinimumShouldMatch int `json:"minimum_should_match"`
			} `json:"bool"`
			Term  map[string]string   `json:"term"`
			Terms map[string][]string `json:"terms"`
		} `json:"filter"`
		Must []struct {
			Bool struct {
				Should []struct {
					MatchPhrase map[string]struct {
						Query string  `json:"query"`
						Boost float64 `json:"boost"`
					} `json:"match_phrase"`
				} `json:"should"`
				MinimumShouldMatch int `json:"minimum_should_match"`
			} `json:"bool"`
		} `json:"must"`
	} `json:"bool"`
}

func (f *fakeOpenSearch) search(w http.ResponseWriter, body []byte) {
	var req fakeSearch
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		f.fail(w, 400, "parsing_exception", "search body %s: %v", body, err)
		return
	}
	var raw map[string]any
	_ = json.Unmarshal(body, &raw)
	f.bodies = append(f.bodies, raw)
	wantSort := []any{map[string]any{"_score": "desc"}, map[string]any{"docId": "asc"}}
	if req.Source == nil || *req.Source || !req.TrackTotalHits || req.Size < 1 || !reflect.DeepEqual(req.Sort, wantSort) || len(req.Query.Bool.Must) == 0 {
		f.fail(w, 400, "parsing_exception", "search body %s", body)
		return
	}
	type scored struct {
		id    string
		score float32
	}
	// The filters: at most the caller's narrowing, then the url and the
	// archives, both or neither.
	fls := req.Query.Bool.Filter
	if n := len(fls); n > 0 && fls[n-1].Terms != nil {
		if n < 2 || len(fls[n-2].Term) != 1 || fls[n-2].Term["url"] == "" || fls[n-2].Bool != nil || fls[n-2].Terms != nil ||
			len(fls[n-1].Terms) != 1 || len(fls[n-1].Terms["archiveId"]) == 0 || len(fls[n-1].Terms["archiveId"]) > 65536 || fls[n-1].Bool != nil || fls[n-1].Term != nil {
			f.fail(w, 400, "parsing_exception", "url and archive filters %s", body)
			return
		}
		fls = fls[:n-2]
	}
	if len(fls) > 1 {
		f.fail(w, 400, "parsing_exception", "more than one filter %s", body)
		return
	}
	for _, fl := range fls {
		if fl.Bool == nil || fl.Term != nil || fl.Terms != nil || fl.Bool.MinimumShouldMatch != 1 || len(fl.Bool.Should) == 0 {
			f.fail(w, 400, "parsing_exception", "filter %s", body)
			return
		}
		for _, sh := range fl.Bool.Should {
			if len(sh.Terms) != 1 {
				f.fail(w, 400, "parsing_exception", "terms clause %s", body)
				return
			}
			for field, vals := range sh.Terms {
				// terms on keyword fields only; OpenSearch's default
				// index.max_terms_count is 65,536.
				if (field != "grantees" && field != "archiveId") || len(vals) == 0 || len(vals) > 65536 {
					f.fail(w, 400, "parsing_exception", "terms on %q (%d values)", field, len(vals))
					return
				}
			}
		}
	}
	var hits []scored
	for id, src := range f.docs {
		total := 0.0
		ok := fakeFiltered(src, req.Query)
		for _, m := range req.Query.Bool.Must {
			if m.Bool.MinimumShouldMatch != 1 || len(m.Bool.Should) == 0 {
				f.fail(w, 400, "parsing_exception", "must clause %s", body)
				return
			}
			sum := 0.0
			for _, s := range m.Bool.Should {
				if len(s.MatchPhrase) != 1 {
					f.fail(w, 400, "parsing_exception", "should clause %s", body)
					return
				}
				for field, p := range s.MatchPhrase {
					n, err := phraseCount(src, field, p.Query)
					if err != nil {
						f.fail(w, 400, "parsing_exception", "%v", err)
						return
					}
					sum += p.Boost * float64(n)
				}
			}
			if sum == 0 {
				ok = false
				break
			}
			total += sum
		}
		if ok {
			hits = append(hits, scored{id, float32(total / (1 + math.Log1p(float64(len(fmt.Sprint(src["text"]))))))})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].id < hits[j].id
	})
	matched := len(hits) // hits.total counts the query, not what follows search_after
	if req.SearchAfter != nil {
		if len(req.SearchAfter) != 2 {
			f.fail(w, 400, "parsing_exception", "search_after %v", req.SearchAfter)
			return
		}
		// OpenSearch reads a _score sort value back as a float, as it
		// wrote it.
		f64, _ := req.SearchAfter[0].(float64)
		s := float32(f64)
		id, _ := req.SearchAfter[1].(string)
		var rest []scored
		for _, h := range hits {
			if h.score < s || (h.score == s && h.id > id) {
				rest = append(rest, h)
			}
		}
		hits = rest
	}
	out := []any{}
	for i, h := range hits {
		if i == req.Size {
			break
		}
		out = append(out, map[string]any{"_index": f.index, "_id": h.id, "_score": nil, "sort": []any{h.score, h.id}})
	}
	writeFake(w, 200, map[string]any{"took": 1, "hits": map[string]any{"total": map[string]any{"value": matched, "relation": "eq"}, "hits": out}})
}

// fakeFiltered says whether a document passes the query's filter: one of
// the terms clauses holds one of the document's values of its field.
func fakeFiltered(src map[string]any, q fakeQ) bool {
	for _, fl := range q.Bool.Filter {
		if fl.Term != nil {
			if src["url"] != fl.Term["url"] {
				return false
			}
			continue
		}
		if fl.Terms != nil {
			if id, _ := src["archiveId"].(string); !slices.Contains(fl.Terms["archiveId"], id) {
				return false
			}
			continue
		}
		pass := false
		for _, sh := range fl.Bool.Should {
			for field, vals := range sh.Terms {
				var have []string
				switch v := src[field].(type) {
				case string:
					have = []string{v}
				case []any:
					for _, x := range v {
						if s, ok := x.(string); ok {
							have = append(have, s)
						}
					}
				}
				for _, h := range have {
					if slices.Contains(vals, h) {
						pass = true
					}
				}
			}
		}
		if !pass {
			return false
		}
	}
	return true
}

// phraseCount counts where the analysed phrase occurs in the analysed
// field, tokens at consecutive positions (the gaps stop words leave kept).
func phraseCount(src map[string]any, field, phrase string) (int, error) {
	a, base := fakeCJK, field
	if b, ok := strings.CutSuffix(field, ".en"); ok {
		a, base = fakeEN, b
	}
	if base != "title" && base != "text" {
		return 0, fmt.Errorf("match_phrase on field %q", field)
	}
	text, _ := src[base].(string)
	want := a.Analyze([]byte(phrase))
	if len(want) == 0 {
		return 0, nil
	}
	got := a.Analyze([]byte(text))
	byPos := map[int]string{}
	for _, t := range got {
		byPos[t.Position] = string(t.Term)
	}
	n := 0
	for _, t := range got {
		if string(t.Term) != string(want[0].Term) {
			continue
		}
		ok := true
		for _, w := range want[1:] {
			if byPos[t.Position+w.Position-want[0].Position] != string(w.Term) {
				ok = false
				break
			}
		}
		if ok {
			n++
		}
	}
	return n, nil
}

func (f *fakeOpenSearch) mget(w http.ResponseWriter, body []byte) {
	var req struct {
		IDs []string `json:"ids"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || len(req.IDs) == 0 {
		f.fail(w, 400, "parsing_exception", "mget %s", body)
		return
	}
	if !f.created {
		writeFake(w, 404, map[string]any{"error": map[string]any{"type": "index_not_found_exception"}, "status": 404})
		return
	}
	docs := []any{}
	for _, id := range req.IDs {
		if src, ok := f.docs[id]; ok {
			docs = append(docs, map[string]any{"_index": f.index, "_id": id, "found": true, "_source": src})
		} else {
			docs = append(docs, map[string]any{"_index": f.index, "_id": id, "found": false})
		}
	}
	writeFake(w, 200, map[string]any{"docs": docs})
}
