package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/opensearch-project/opensearch-go/v4"
)

// OpenSearch is the index in an OpenSearch cluster (CAPTURE_LEDGER_
// OPENSEARCH_URL): the index and mapping the original service used — title and text
// with the built-in cjk analyzer — plus an english sub-field of each and two
// fields for paging (page, docId). Writes are bulk requests; result pages
// follow search_after on (score, docId).
type OpenSearch struct {
	client *opensearch.Client
	index  string
	where  string // the URL without credentials, for messages

	mu      sync.Mutex
	ensured bool
}

var _ Backend = (*OpenSearch)(nil)

// DefaultOpenSearchIndex is the index name when none is configured.
const DefaultOpenSearchIndex = "capture-pages"

// NewOpenSearch returns a backend for index on the cluster at rawURL (it
// does not contact it: the index is created before the first write).
func NewOpenSearch(rawURL, index string, transport http.RoundTripper) (*OpenSearch, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OpenSearch URL %q: must be an http(s) URL", redact(rawURL))
	}
	if index == "" {
		index = DefaultOpenSearchIndex
	}
	cfg := opensearch.Config{Addresses: []string{rawURL}, Transport: transport, DiscoverNodesOnStart: new(bool)}
	if u.User != nil {
		cfg.Username = u.User.Username()
		cfg.Password, _ = u.User.Password()
	}
	c, err := opensearch.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("OpenSearch client: %w", err)
	}
	return &OpenSearch{client: c, index: index, where: redact(rawURL)}, nil
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.String()
}

// Filters is true: an index created before pages carried grantees gains
// the field before the first write (its older pages are found by archive
// id until they are indexed again).
func (o *OpenSearch) Filters() bool { return true }

// Name says which cluster and index.
func (o *OpenSearch) Name() string { return fmt.Sprintf("OpenSearch index %s at %s", o.index, o.where) }

// Close releases the client's connections.
func (o *OpenSearch) Close() error { return o.client.Close() }

// OpenSearchMapping is the body that creates the index: the original
// service's fields (docs/search.md), an english sub-field of title and text (stems for Latin text),
// and page and docId, which order results and page through them.
func OpenSearchMapping() map[string]any {
	text := map[string]any{"type": "text", "analyzer": "cjk", "fields": map[string]any{"en": map[string]any{"type": "text", "analyzer": "english"}}}
	kw := map[string]any{"type": "keyword"}
	// A keyword longer than Lucene's term limit fails the whole document;
	// past ignore_above it is kept in _source and not indexed.
	longKW := map[string]any{"type": "keyword", "ignore_above": 8191}
	return map[string]any{"mappings": map[string]any{
		"dynamic": "strict",
		"properties": map[string]any{
			"archiveId": kw, "page": map[string]any{"type": "integer"}, "docId": kw,
			"url": longKW, "title": text, "text": text,
			"textTruncated": map[string]any{"type": "boolean"}, "textWithheld": kw,
			"objectKey": longKW, "sourceUrl": longKW, "labels": kw,
			"capturedAt": map[string]any{"type": "date"},
			"grantees":   kw,
		},
	}}
}

// openSearchGranteesMapping adds the grantees field to an index created
// before it existed (adding a field to a mapping is allowed; the request
// is a no-op when the field is there with the same type).
func openSearchGranteesMapping() map[string]any {
	return map[string]any{"properties": map[string]any{"grantees": map[string]any{"type": "keyword"}}}
}

// ensureIndex creates the index with its mapping unless it exists; the
// first writer wins a race (resource_already_exists_exception is fine).
func (o *OpenSearch) ensureIndex(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ensured {
		return nil
	}
	status, _, err := o.do(ctx, http.MethodHead, "/"+url.PathEscape(o.index), nil, nil)
	if err != nil {
		return err
	}
	if status == http.StatusNotFound {
		status, body, err := o.do(ctx, http.MethodPut, "/"+url.PathEscape(o.index), nil, OpenSearchMapping())
		if err != nil {
			return err
		}
		if status >= 300 && !bytes.Contains(body, []byte("resource_already_exists_exception")) {
			return o.answerError("create the index", status, body)
		}
	} else if status >= 300 {
		return o.answerError("look for the index", status, nil)
	} else {
		// An index of an earlier version: give it the grantees field.
		status, body, err := o.do(ctx, http.MethodPut, "/"+url.PathEscape(o.index)+"/_mapping", nil, openSearchGranteesMapping())
		if err != nil {
			return err
		}
		if status >= 300 {
			return o.answerError("add the grantees field to the mapping", status, body)
		}
	}
	o.ensured = true
	return nil
}

// Put writes the archives' documents in one bulk request (each under its
// docId, so writing an archive again overwrites it), then deletes each
// archive's documents past its new last page in one delete-by-query; both
// refresh, so searches see the result at once.
func (o *OpenSearch) Put(ctx context.Context, archives map[string][]Document) error {
	if err := o.ensureIndex(ctx); err != nil {
		return err
	}
	var nd bytes.Buffer
	enc := json.NewEncoder(&nd)
	enc.SetEscapeHTML(false)
	n := 0
	for _, docs := range archives {
		for _, d := range docs {
			_ = enc.Encode(map[string]any{"index": map[string]any{"_id": d.ID()}})
			if err := enc.Encode(openSearchSource(d)); err != nil {
				return err
			}
			n++
		}
	}
	if n > 0 {
		if err := o.bulk(ctx, &nd, n); err != nil {
			return err
		}
	}
	if len(archives) == 0 {
		return nil
	}
	var stale []any
	for archiveID, docs := range archives {
		stale = append(stale, map[string]any{"bool": map[string]any{"filter": []any{
			map[string]any{"term": map[string]any{"archiveId": archiveID}},
			map[string]any{"range": map[string]any{"page": map[string]any{"gte": len(docs)}}},
		}}})
	}
	del := map[string]any{"query": map[string]any{"bool": map[string]any{"should": stale, "minimum_should_match": 1}}}
	status, body, err := o.do(ctx, http.MethodPost, "/"+url.PathEscape(o.index)+"/_delete_by_query?refresh=true&conflicts=proceed", nil, del)
	if err != nil {
		return err
	}
	if status >= 300 {
		return o.answerError("delete old pages", status, body)
	}
	return nil
}

// bulk sends one _bulk request of n index actions and checks every item.
func (o *OpenSearch) bulk(ctx context.Context, nd io.Reader, n int) error {
	status, body, err := o.do(ctx, http.MethodPost, "/"+url.PathEscape(o.index)+"/_bulk?refresh=true", nd, nil)
	if err != nil {
		return err
	}
	if status >= 300 {
		return o.answerError("bulk write", status, body)
	}
	var res struct {
		Errors bool `json:"errors"`
		Items  []map[string]struct {
			ID     string          `json:"_id"`
			Status int             `json:"status"`
			Error  json.RawMessage `json:"error"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("bulk write to %s: unreadable answer: %w", o.Name(), err)
	}
	if res.Errors || len(res.Items) != n {
		for _, it := range res.Items {
			for _, r := range it {
				if r.Status >= 300 {
					return fmt.Errorf("bulk write to %s: document %s: %d %s", o.Name(), r.ID, r.Status, oneLine(r.Error))
				}
			}
		}
		return fmt.Errorf("bulk write to %s: %d answers for %d documents", o.Name(), len(res.Items), n)
	}
	return nil
}

// openSearchSource is a document as _source: the Document's JSON plus its
// docId.
func openSearchSource(d Document) map[string]any {
	src := map[string]any{
		"archiveId": d.ArchiveID, "page": d.Page, "docId": d.ID(), "url": d.URL, "title": d.Title, "text": d.Text,
		"textTruncated": d.TextTruncated, "textWithheld": d.TextWithheld, "objectKey": d.ObjectKey,
		"sourceUrl": d.SourceURL, "labels": d.Labels, "capturedAt": d.CapturedAt, "grantees": d.Grantees,
	}
	if d.Labels == nil {
		src["labels"] = []string{}
	}
	return src
}

// OpenSearchQuery is the query body of q: every term must match, in title
// (boosted) or text, with either analyzer — the same query Bleve runs.
func OpenSearchQuery(q Query) map[string]any {
	must := make([]any, 0, len(q.Terms))
	for _, t := range q.Terms {
		phrase := func(field string, boost float64) any {
			return map[string]any{"match_phrase": map[string]any{field: map[string]any{"query": t.Text, "boost": boost}}}
		}
		should := []any{phrase("title", 2), phrase("text", 1)}
		if t.English {
			should = append(should, phrase("title.en", 2), phrase("text.en", 1))
		}
		must = append(must, map[string]any{"bool": map[string]any{"should": should, "minimum_should_match": 1}})
	}
	return map[string]any{"bool": map[string]any{"must": must}}
}

// OpenSearchFilter is f as a filter clause (no effect on scores): a
// terms query on grantees or one on archiveId.
func OpenSearchFilter(f *Filter) map[string]any {
	var should []any
	if len(f.Grantees) > 0 {
		should = append(should, map[string]any{"terms": map[string]any{"grantees": f.Grantees}})
	}
	if len(f.Archives) > 0 {
		should = append(should, map[string]any{"terms": map[string]any{"archiveId": f.Archives}})
	}
	return map[string]any{"bool": map[string]any{"should": should, "minimum_should_match": 1}}
}

// Candidates runs q, narrowed by f in the query's filter context, without
// _source, sorted by score then docId, from search_after. A missing index
// has no matches.
func (o *OpenSearch) Candidates(ctx context.Context, q Query, f *Filter, after *Position, size int) ([]Position, int, error) {
	query := OpenSearchQuery(q)
	if f != nil {
		if len(f.Grantees)+len(f.Archives) == 0 {
			return []Position{}, 0, nil
		}
		query["bool"].(map[string]any)["filter"] = []any{OpenSearchFilter(f)}
	}
	return o.search(ctx, query, after, size)
}

// Among runs q, narrowed by f and to the pages of archives whose url is
// url (all in filter context), and says which archives have one.
func (o *OpenSearch) Among(ctx context.Context, q Query, f *Filter, url string, archives []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(archives) == 0 {
		return out, nil
	}
	query := OpenSearchQuery(q)
	var filter []any
	if f != nil {
		if len(f.Grantees)+len(f.Archives) == 0 {
			return out, nil
		}
		filter = append(filter, OpenSearchFilter(f))
	}
	query["bool"].(map[string]any)["filter"] = append(filter,
		map[string]any{"term": map[string]any{"url": url}},
		map[string]any{"terms": map[string]any{"archiveId": archives}})
	var after *Position
	for {
		hits, _, err := o.search(ctx, query, after, len(archives)+1)
		if err != nil {
			return nil, err
		}
		for _, p := range hits {
			out[p.ArchiveID] = true
		}
		if len(hits) < len(archives)+1 {
			return out, nil
		}
		after = &hits[len(hits)-1]
	}
}

// search sends one search of query, without _source, sorted by score then
// docId, from search_after, and reads the positions and the total.
func (o *OpenSearch) search(ctx context.Context, query map[string]any, after *Position, size int) ([]Position, int, error) {
	body := map[string]any{
		"size": max(size, 1), "_source": false, "track_total_hits": true,
		"query": query,
		"sort":  []any{map[string]any{"_score": "desc"}, map[string]any{"docId": "asc"}},
	}
	if after != nil {
		body["search_after"] = []any{after.Score, after.DocID()}
	}
	status, raw, err := o.do(ctx, http.MethodPost, "/"+url.PathEscape(o.index)+"/_search?ignore_unavailable=true", nil, body)
	if err != nil {
		return nil, 0, err
	}
	if status >= 300 {
		return nil, 0, o.answerError("search", status, raw)
	}
	var res struct {
		Hits struct {
			Total struct {
				Value int `json:"value"`
			} `json:"total"`
			Hits []struct {
				ID   string            `json:"_id"`
				Sort []json.RawMessage `json:"sort"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, 0, fmt.Errorf("search %s: unreadable answer: %w", o.Name(), err)
	}
	out := make([]Position, 0, len(res.Hits.Hits))
	for _, h := range res.Hits.Hits {
		p, err := parseDocID(h.ID)
		if err != nil {
			return nil, 0, err
		}
		// The score is the sort value, exactly as the cluster sent it: a
		// search_after must repeat it to the last digit.
		if len(h.Sort) != 2 || json.Unmarshal(h.Sort[0], &p.Score) != nil {
			return nil, 0, fmt.Errorf("search %s: hit %s has no score in its sort values", o.Name(), h.ID)
		}
		out = append(out, p)
	}
	return out, res.Hits.Total.Value, nil
}

// Documents reads the documents' _source with one _mget. A missing index
// has none.
func (o *OpenSearch) Documents(ctx context.Context, ids []string) (map[string]Document, error) {
	out := make(map[string]Document, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	status, raw, err := o.do(ctx, http.MethodPost, "/"+url.PathEscape(o.index)+"/_mget", nil, map[string]any{"ids": ids})
	if err != nil {
		return nil, err
	}
	if status == http.StatusNotFound && bytes.Contains(raw, []byte("index_not_found_exception")) {
		return out, nil
	}
	if status >= 300 {
		return nil, o.answerError("read documents", status, raw)
	}
	var res struct {
		Docs []struct {
			ID     string          `json:"_id"`
			Found  bool            `json:"found"`
			Source json.RawMessage `json:"_source"`
		} `json:"docs"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("read documents from %s: unreadable answer: %w", o.Name(), err)
	}
	for _, d := range res.Docs {
		if !d.Found {
			continue
		}
		var doc Document
		if err := json.Unmarshal(d.Source, &doc); err != nil {
			return nil, fmt.Errorf("read %s from %s: %w", d.ID, o.Name(), err)
		}
		out[d.ID] = doc
	}
	return out, nil
}

// do sends one request (a JSON body, or the given NDJSON reader) and reads
// the answer. Only a request nothing answered is an error here; statuses
// are the caller's to judge.
func (o *OpenSearch) do(ctx context.Context, method, path string, ndjson io.Reader, body any) (int, []byte, error) {
	var rd io.Reader
	ctype := "application/json"
	switch {
	case ndjson != nil:
		rd, ctype = ndjson, "application/x-ndjson"
	case body != nil:
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return 0, nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := o.client.Perform(req)
	if err != nil {
		return 0, nil, &UnreachableError{Where: o.Name(), Err: err}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 256<<20))
	if err != nil {
		return 0, nil, &UnreachableError{Where: o.Name(), Err: err}
	}
	if res.StatusCode == http.StatusServiceUnavailable || res.StatusCode == http.StatusTooManyRequests {
		return 0, nil, &UnreachableError{Where: o.Name(), Err: errors.New(res.Status)}
	}
	return res.StatusCode, raw, nil
}

func (o *OpenSearch) answerError(what string, status int, body []byte) error {
	return fmt.Errorf("%s in %s: %d %s", what, o.Name(), status, oneLine(body))
}

// oneLine shortens an answer body for an error message.
func oneLine(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = cutValid(s, 300) + "…"
	}
	return s
}
