package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

// Bleve is the index on local disk (the single-machine default): one Bleve
// index directory. Title and text are indexed twice, with the CJK bigram
// analyzer (fields title and text) and with the English one (title_en,
// text_en); the document itself is stored once, as JSON, for Documents.
type Bleve struct {
	idx bleve.Index
	dir string
	// legacy is an index of bleveMappingV1: no grantees field.
	legacy bool
	// id is the index's own random id (IndexID).
	id string
}

var _ Backend = (*Bleve)(nil)

// bleveMappingVersion names the mapping below. An index built with
// bleveMappingV1 (before pages carried grantees) still opens, as a legacy
// index: Bleve cannot add a field to an existing index's mapping, so its
// pages cannot be filtered by grantee, and searches over it narrow after the
// index as before (Filters reports it; serve logs how to rebuild it:
// remove the directory and run `ledgerctl search reindex`). An index built
// with any other mapping is refused with the same fix.
const (
	bleveMappingVersion = "capture-ledger pages v2"
	bleveMappingV1      = "capture-ledger pages v1"
)

var (
	bleveVersionKey = []byte("mapping-version")
	bleveIDKey      = []byte("index-id")
)

// ErrIndexBusy is a Bleve index another process holds open: Bleve keeps a
// lock on its directory for as long as it is open, and `serve` holds it for
// its lifetime.
var ErrIndexBusy = errors.New("the search index is open in another process (a running `ledgerctl serve`?); stop it, or use the API")

// OpenBleve opens the index in dir, creating it (and dir) when absent.
func OpenBleve(dir string) (*Bleve, error) {
	cfg := map[string]interface{}{"bolt_timeout": "2s"}
	idx, err := bleve.OpenUsing(dir, cfg)
	if errors.Is(err, bleve.ErrorIndexPathDoesNotExist) || errors.Is(err, bleve.ErrorIndexMetaMissing) {
		if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
			return nil, fmt.Errorf("search index directory: %w", err)
		}
		idx, err = bleve.NewUsing(dir, bleveMapping(), scorch.Name, scorch.Name, cfg)
		if err == nil {
			err = idx.SetInternal(bleveVersionKey, []byte(bleveMappingVersion))
		}
	}
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w", dir, ErrIndexBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("open the search index %s: %w", dir, err)
	}
	v, err := idx.GetInternal(bleveVersionKey)
	if err != nil || (string(v) != bleveMappingVersion && string(v) != bleveMappingV1) {
		_ = idx.Close()
		return nil, fmt.Errorf("the search index %s was built with another mapping (%q, want %q): remove the directory and run `ledgerctl search reindex`", dir, v, bleveMappingVersion)
	}
	id, err := idx.GetInternal(bleveIDKey)
	if err == nil && len(id) == 0 {
		// An index made before indexes carried an id gets one now.
		id = []byte("bleve " + uuid.NewString())
		err = idx.SetInternal(bleveIDKey, id)
	}
	if err != nil {
		_ = idx.Close()
		return nil, fmt.Errorf("the search index %s: its id: %w", dir, err)
	}
	return &Bleve{idx: idx, dir: dir, legacy: string(v) == bleveMappingV1, id: string(id)}, nil
}

// IndexID is the index's random id, kept in the index directory itself:
// the ledger records the id of the index its indexed_at marks were made
// for, so a directory whose id differs (another, a fresh or an emptied
// one) is never taken for it.
func (b *Bleve) IndexID() string { return b.id }

// bleveMapping indexes only the fields named here; "source" is stored, not
// indexed.
func bleveMapping() mapping.IndexMapping {
	text := func(name, analyzer string) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Name, f.Analyzer = name, analyzer
		f.Store, f.DocValues, f.IncludeInAll = false, false, false
		f.IncludeTermVectors = true // phrase queries need positions
		return f
	}
	kw := func() *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Analyzer = keyword.Name
		f.Store, f.IncludeTermVectors, f.IncludeInAll, f.DocValues = false, false, false, false
		return f
	}
	doc := bleve.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt("title", text("title", cjk.AnalyzerName), text("title_en", en.AnalyzerName))
	doc.AddFieldMappingsAt("text", text("text", cjk.AnalyzerName), text("text_en", en.AnalyzerName))
	for _, name := range []string{"archiveId", "url", "textWithheld", "objectKey", "sourceUrl", "labels", "grantees"} {
		doc.AddFieldMappingsAt(name, kw())
	}
	src := bleve.NewTextFieldMapping()
	src.Index, src.Store, src.IncludeTermVectors, src.IncludeInAll, src.DocValues = false, true, false, false, false
	doc.AddFieldMappingsAt("source", src)

	m := bleve.NewIndexMapping()
	m.DefaultMapping = doc
	m.DefaultAnalyzer = keyword.Name
	m.StoreDynamic, m.IndexDynamic, m.DocValuesDynamic = false, false, false
	return m
}

// Filters says whether Candidates applies a Filter: false for an index
// built before pages carried grantees, which must be rebuilt for it.
func (b *Bleve) Filters() bool { return !b.legacy }

// Name says where the index is.
func (b *Bleve) Name() string { return "the Bleve index at " + b.dir }

// Close closes the index (and releases its directory lock).
func (b *Bleve) Close() error { return b.idx.Close() }

// Put replaces the documents of the archives in one batch: the new ones
// are written under their ids and the archives' other documents deleted.
func (b *Bleve) Put(ctx context.Context, archives map[string][]Document) error {
	batch := b.idx.NewBatch()
	for archiveID, docs := range archives {
		keep := make(map[string]bool, len(docs))
		for _, d := range docs {
			fields, err := bleveFields(d)
			if err != nil {
				return err
			}
			if err := batch.Index(d.ID(), fields); err != nil {
				return fmt.Errorf("index %s: %w", d.ID(), err)
			}
			keep[d.ID()] = true
		}
		old, err := b.archiveDocIDs(ctx, archiveID)
		if err != nil {
			return err
		}
		for _, id := range old {
			if !keep[id] {
				batch.Delete(id)
			}
		}
	}
	if err := b.idx.Batch(batch); err != nil {
		return fmt.Errorf("write to %s: %w", b.Name(), err)
	}
	return nil
}

// Load adds documents to a fresh index in batches of 1,000, without
// looking for earlier pages of their archives (Put does): for filling an
// index in bulk (benchmarks, imports), not for re-indexing.
func (b *Bleve) Load(ctx context.Context, docs []Document) error {
	for start := 0; start < len(docs); start += 1000 {
		if err := ctx.Err(); err != nil {
			return err
		}
		batch := b.idx.NewBatch()
		for _, d := range docs[start:min(start+1000, len(docs))] {
			fields, err := bleveFields(d)
			if err != nil {
				return err
			}
			if err := batch.Index(d.ID(), fields); err != nil {
				return fmt.Errorf("index %s: %w", d.ID(), err)
			}
		}
		if err := b.idx.Batch(batch); err != nil {
			return fmt.Errorf("write to %s: %w", b.Name(), err)
		}
	}
	return nil
}

// bleveFields is the document as Bleve indexes it.
func bleveFields(d Document) (map[string]interface{}, error) {
	src, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	fields := map[string]interface{}{
		"archiveId": d.ArchiveID, "url": d.URL, "title": d.Title, "text": d.Text,
		"objectKey": d.ObjectKey, "sourceUrl": d.SourceURL, "labels": d.Labels, "source": string(src),
		"grantees": d.Grantees,
	}
	if d.TextWithheld != nil {
		fields["textWithheld"] = *d.TextWithheld
	}
	return fields, nil
}

// archiveDocIDs lists the ids of the documents archiveID has now.
func (b *Bleve) archiveDocIDs(ctx context.Context, archiveID string) ([]string, error) {
	q := bleve.NewTermQuery(archiveID)
	q.SetField("archiveId")
	var ids []string
	var after []string
	for {
		req := bleve.NewSearchRequestOptions(q, 1000, 0, false)
		req.SortBy([]string{"_id"})
		req.SearchAfter = after
		res, err := b.idx.SearchInContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list the documents of archive %s: %w", archiveID, err)
		}
		for _, h := range res.Hits {
			ids = append(ids, h.ID)
		}
		if len(res.Hits) < 1000 {
			return ids, nil
		}
		after = []string{res.Hits[len(res.Hits)-1].ID}
	}
}

// Candidates runs q, narrowed by f, sorted by score, then id, after
// `after`.
func (b *Bleve) Candidates(ctx context.Context, q Query, f *Filter, after *Position, size int) ([]Position, int, error) {
	bq := bleveQuery(q)
	if f != nil && !b.legacy {
		if len(f.Grantees)+len(f.Archives) == 0 {
			return []Position{}, 0, nil
		}
		bq.AddQuery(bleveFilter(f))
	}
	req := bleve.NewSearchRequestOptions(bq, max(size, 1), 0, false)
	req.SortBy([]string{"-_score", "_id"})
	if after != nil {
		req.SearchAfter = []string{strconv.FormatFloat(after.Score, 'g', -1, 64), after.DocID()}
	}
	res, err := b.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, 0, fmt.Errorf("search %s: %w", b.Name(), err)
	}
	out := make([]Position, 0, len(res.Hits))
	for _, h := range res.Hits {
		p, err := parseDocID(h.ID)
		if err != nil {
			return nil, 0, err
		}
		p.Score = h.Score
		out = append(out, p)
	}
	return out, int(res.Total), nil
}

// Among runs q, narrowed by f, to the pages of archives whose url is url
// (term queries of boost 0), and says which archives have one.
func (b *Bleve) Among(ctx context.Context, q Query, f *Filter, url string, archives []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(archives) == 0 {
		return out, nil
	}
	bq := bleveQuery(q)
	if f != nil && !b.legacy {
		if len(f.Grantees)+len(f.Archives) == 0 {
			return out, nil
		}
		bq.AddQuery(bleveFilter(f))
	}
	uq := bleve.NewTermQuery(url)
	uq.SetField("url")
	uq.SetBoost(0)
	bq.AddQuery(uq, bleveFilter(&Filter{Archives: archives}))
	var after []string
	for {
		req := bleve.NewSearchRequestOptions(bq, len(archives)+1, 0, false)
		req.SortBy([]string{"_id"})
		req.SearchAfter = after
		res, err := b.idx.SearchInContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", b.Name(), err)
		}
		for _, h := range res.Hits {
			p, err := parseDocID(h.ID)
			if err != nil {
				return nil, err
			}
			out[p.ArchiveID] = true
		}
		if len(res.Hits) < len(archives)+1 {
			return out, nil
		}
		after = []string{res.Hits[len(res.Hits)-1].ID}
	}
}

// bleveFilter is f as one more conjunct: any of the grantee keys or
// archive ids, each a term query of boost 0, so a page's score is the same
// with the filter as without. A conjunction advances its parts together:
// pages the filter leaves out are skipped over in the postings (an
// outsider's filter holds no posting, and the search ends at once), where a
// boolean query's filter clause would score every text match first.
func bleveFilter(f *Filter) query.Query {
	var parts []query.Query
	add := func(field string, vals []string) {
		for _, v := range vals {
			tq := bleve.NewTermQuery(v)
			tq.SetField(field)
			tq.SetBoost(0)
			parts = append(parts, tq)
		}
	}
	add("grantees", f.Grantees)
	add("archiveId", f.Archives)
	dq := bleve.NewDisjunctionQuery(parts...)
	dq.SetBoost(0)
	return dq
}

// bleveQuery: every term, in title (boosted) or text, through either
// analyzer; see Term. A term that analyses to one token is a term query
// (a phrase query of one token costs about twenty times as much in Bleve:
// it reads every hit's positions); longer ones are phrase queries.
func bleveQuery(q Query) *query.ConjunctionQuery {
	var must []query.Query
	for _, t := range q.Terms {
		var either []query.Query
		// The analyzer is named: Bleve finds a field's own only by its path,
		// and title_en and text_en are second names of title and text.
		add := func(fields []string, analyzer string, a analysis.Analyzer) {
			toks := tokens(a, t.Text)
			for i, field := range fields {
				boost := 1.0
				if i == 0 {
					boost = 2 // the title
				}
				switch len(toks) {
				case 0:
				case 1:
					tq := bleve.NewTermQuery(string(toks[0].Term))
					tq.SetField(field)
					tq.SetBoost(boost)
					either = append(either, tq)
				default:
					p := bleve.NewMatchPhraseQuery(t.Text)
					p.SetField(field)
					p.Analyzer = analyzer
					p.SetBoost(boost)
					either = append(either, p)
				}
			}
		}
		add([]string{"title", "text"}, cjk.AnalyzerName, cjkAnalyzer)
		if t.English {
			add([]string{"title_en", "text_en"}, en.AnalyzerName, enAnalyzer)
		}
		must = append(must, bleve.NewDisjunctionQuery(either...))
	}
	return bleve.NewConjunctionQuery(must...)
}

// Documents reads the stored documents.
func (b *Bleve) Documents(ctx context.Context, ids []string) (map[string]Document, error) {
	out := make(map[string]Document, len(ids))
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		doc, err := b.idx.Document(id)
		if err != nil {
			return nil, fmt.Errorf("read %s from %s: %w", id, b.Name(), err)
		}
		if doc == nil {
			continue
		}
		var src []byte
		doc.VisitFields(func(f index.Field) {
			if f.Name() == "source" {
				src = f.Value()
			}
		})
		var d Document
		if err := json.Unmarshal(src, &d); err != nil {
			return nil, fmt.Errorf("read %s from %s: stored document: %w", id, b.Name(), err)
		}
		out[id] = d
	}
	return out, nil
}

// parseDocID reads an id DocID made.
func parseDocID(id string) (Position, error) {
	archiveID, page, ok := strings.Cut(id, "/")
	n, err := strconv.Atoi(page)
	if !ok || err != nil || len(page) != 8 || archiveID == "" {
		return Position{}, fmt.Errorf("search index: a document id %q that is not <archive>/<page>", id)
	}
	return Position{ArchiveID: archiveID, Page: n}, nil
}
