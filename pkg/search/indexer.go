package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// Ledger is what the indexer reads and writes in the ledger database.
type Ledger interface {
	// UnindexedArchives returns up to limit archives with indexed_at NULL
	// whose id sorts after afterID ("" for the first), in id order, leaving
	// out those whose last failure is not yet due for a retry.
	UnindexedArchives(ctx context.Context, afterID string, limit int) ([]ledger.Archive, error)
	// UnindexedArchivesByID returns those of ids with indexed_at NULL,
	// retry time or not (an explicit request retries now).
	UnindexedArchivesByID(ctx context.Context, ids []string) ([]ledger.Archive, error)
	// MarkIndexed sets the archives' indexed_at and forgets their
	// failures.
	MarkIndexed(ctx context.Context, ids []string) error
	// RecordIndexFailure keeps why the archive could not be indexed and
	// when to try again: retryBase after the first failure, doubling with
	// each further one up to retryMax. indexed_at stays NULL.
	RecordIndexFailure(ctx context.Context, id, reason string, retryBase, retryMax time.Duration) error
	// ArchiveGrantees returns the grantee keys (GranteeKey's form, sorted)
	// the ledger recorded for each of ids: its organizations and owner.
	ArchiveGrantees(ctx context.Context, ids []string) (map[string][]string, error)
	// MarkUnindexed sets the archives' indexed_at back to NULL (their
	// grantees changed while they were being indexed).
	MarkUnindexed(ctx context.Context, ids []string) error
}

// Object is an open object of the bucket, read at offsets.
type Object interface {
	io.ReaderAt
	Size() int64
}

// Objects opens objects for ranged reading. A missing object is an error
// for that archive; one matching ledger.ErrUnreachable stops the pass.
type Objects interface {
	OpenObject(ctx context.Context, bucket, key string) (Object, error)
}

// Indexer puts the pages of archives that are not yet indexed into the
// backend. The same Indexer serves `serve`'s background loop (Run), the
// crawl index route and runner (IndexArchives), and `ledgerctl search
// reindex` (IndexPending).
type Indexer struct {
	Ledger  Ledger
	Objects Objects
	Backend Backend
	Log     *slog.Logger
	// Concurrency is how many archives are read and indexed at once
	// (default 4).
	Concurrency int
	// Interval is Run's pause after a pass that found nothing to do, or
	// that stopped on an unreachable dependency (default 10 s).
	Interval time.Duration
	// RetryBase and RetryMax space out the retries of an archive that
	// failed (defaults 1 min and 24 h): a WACZ that is not a ZIP does not
	// become one, and retrying it on every pass would read it forever.
	RetryBase, RetryMax time.Duration
	// Wake, when set, starts Run's next pass before Interval is over:
	// serve sends on it when PostgreSQL notifies that archives wait to be
	// indexed (an admission, a rebuild), so they are searchable within
	// seconds.
	Wake <-chan struct{}
}

// NewIndexer returns an Indexer with the default settings.
func NewIndexer(l Ledger, objects Objects, backend Backend, log *slog.Logger) *Indexer {
	return &Indexer{Ledger: l, Objects: objects, Backend: backend, Log: log}
}

// MaxPagesPerArchive bounds the pages one archive may bring: the indexer
// holds an archive's documents in memory to replace them in one write.
const MaxPagesPerArchive = 10_000

// Result is what an indexing run did.
type Result struct {
	// Indexed is how many archives were indexed (those with no page
	// included: their indexed_at is set too).
	Indexed int `json:"indexed"`
	// Pages is how many pages those archives brought.
	Pages int `json:"pages"`
	// Failed is how many archives could not be indexed; Failures says why.
	Failed   int       `json:"failed"`
	Failures []Failure `json:"failures,omitempty"`
	// SkippedLines counts the lines of pages.jsonl that were neither a page
	// nor the header, in the archives indexed.
	SkippedLines int `json:"skippedLines"`
}

// Failure is one archive that could not be indexed, and why.
type Failure struct {
	ArchiveID string `json:"archiveId"`
	Reason    string `json:"reason"`
}

func (r *Result) add(o outcome) {
	if o.reason != "" {
		r.Failed++
		r.Failures = append(r.Failures, Failure{ArchiveID: o.id, Reason: o.reason})
		return
	}
	r.Indexed++
	r.Pages += o.pages
	r.SkippedLines += o.skipped
}

// outcome is one archive's result: indexed (reason "") or failed.
type outcome struct {
	id             string
	pages, skipped int
	reason         string
}

// IndexPending indexes every archive with indexed_at NULL that is due, in
// batches, until none is left, calling progress after each archive. It
// stops at the first dependency that does not answer (ledger.
// ErrUnreachable); the archives done so far stay done.
func (ix *Indexer) IndexPending(ctx context.Context, progress func()) (Result, error) {
	var res Result
	after := ""
	for {
		batch, err := ix.Ledger.UnindexedArchives(ctx, after, 100)
		if err != nil {
			return res, fmt.Errorf("read the archives to index: %w", err)
		}
		if len(batch) == 0 {
			return res, nil
		}
		after = batch[len(batch)-1].ID
		if err := ix.indexAll(ctx, batch, &res, progress); err != nil {
			return res, err
		}
	}
}

// IndexArchives indexes those of ids that are not indexed yet, failed
// ones included whatever their retry time.
func (ix *Indexer) IndexArchives(ctx context.Context, ids []string) (Result, error) {
	var res Result
	if len(ids) == 0 {
		return res, nil
	}
	archives, err := ix.Ledger.UnindexedArchivesByID(ctx, ids)
	if err != nil {
		return res, fmt.Errorf("read the archives to index: %w", err)
	}
	return res, ix.indexAll(ctx, archives, &res, nil)
}

// Run indexes new archives until ctx ends: a pass over what is pending,
// then a pause of Interval when the pass found nothing or stopped on an
// unreachable dependency (logged), or until Wake. It returns nil when ctx
// ends, ErrNotIndexer when the index was taken over by another process.
func (ix *Indexer) Run(ctx context.Context) error {
	interval := ix.Interval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	for {
		res, err := ix.IndexPending(ctx, nil)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			ix.logger().Warn("indexing stopped; retrying later", "error", err.Error(), "retryIn", interval.String())
		case res.Indexed+res.Failed > 0:
			ix.logger().Info("indexed archives", "indexed", res.Indexed, "pages", res.Pages, "failed", res.Failed, "skippedLines", res.SkippedLines)
		}
		if errors.Is(err, ErrNotIndexer) {
			return err // another process indexes now
		}
		if err == nil && res.Indexed+res.Failed > 0 {
			continue // there may be more right away
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ix.Wake:
		case <-time.After(interval):
		}
	}
}

// writeGroup is how many archives the indexer writes to the backend at
// once, and groupBytes about how much text: one write per archive made
// Bleve spend most of its time merging tiny segments.
const (
	writeGroup = 32
	groupBytes = 32 << 20
)

// indexAll indexes archives in groups: each group's archives are read
// Concurrency at a time, then written to the backend in one Put and marked
// indexed in one statement. An archive that cannot be read, or that the
// backend refuses, is recorded as failed; the others go on.
func (ix *Indexer) indexAll(ctx context.Context, archives []ledger.Archive, res *Result, progress func()) error {
	n := ix.Concurrency
	if n <= 0 {
		n = 4
	}
	for start := 0; start < len(archives); {
		// A group: up to writeGroup archives, read, then written.
		group := archives[start:min(start+writeGroup, len(archives))]
		reads := make([]archiveRead, len(group))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(n)
		for i, a := range group {
			g.Go(func() error {
				docs, skipped, err := ix.read(gctx, a)
				if err != nil && (errors.Is(err, ledger.ErrUnreachable) || gctx.Err() != nil) {
					return err
				}
				reads[i] = archiveRead{a: a, docs: docs, skipped: skipped, err: err}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		start += len(group)
		// One write per groupBytes of text at most.
		for len(reads) > 0 {
			cut, size := len(reads), 0
			for i, r := range reads {
				for _, d := range r.docs {
					size += len(d.Text) + len(d.Title)
				}
				if size > groupBytes && i > 0 {
					cut = i
					break
				}
			}
			if err := ix.write(ctx, reads[:cut], res, progress); err != nil {
				return err
			}
			reads = reads[cut:]
		}
	}
	return nil
}

// archiveRead is one archive's documents, or why they could not be read.
type archiveRead struct {
	a       ledger.Archive
	docs    []Document
	skipped int
	err     error
}

// write puts the readable archives of a group in one backend write (one
// at a time when that write is refused, to find the archive refused),
// marks them indexed, and records the failures.
func (ix *Indexer) write(ctx context.Context, reads []archiveRead, res *Result, progress func()) error {
	batch := map[string][]Document{}
	var readIDs []string
	for _, r := range reads {
		if r.err == nil {
			readIDs = append(readIDs, r.a.ID)
		}
	}
	written := map[string][]string{} // archive id → the grantee keys written
	if len(readIDs) > 0 {
		g, err := ix.Ledger.ArchiveGrantees(ctx, readIDs)
		if err != nil {
			return fmt.Errorf("read the archives' recorded grantees: %w", err)
		}
		written = g
	}
	for i, r := range reads {
		if r.err == nil {
			for j := range r.docs {
				reads[i].docs[j].Grantees = written[r.a.ID]
			}
			batch[r.a.ID] = reads[i].docs
		}
	}
	if len(batch) > 0 {
		err := ix.Backend.Put(ctx, batch)
		if err != nil && (errors.Is(err, ledger.ErrUnreachable) || ctx.Err() != nil) {
			return err
		}
		if err != nil {
			for i, r := range reads {
				if r.err == nil {
					reads[i].err = ix.Backend.Put(ctx, map[string][]Document{r.a.ID: r.docs})
					if reads[i].err != nil && (errors.Is(reads[i].err, ledger.ErrUnreachable) || ctx.Err() != nil) {
						return reads[i].err
					}
				}
			}
		}
	}
	var ok []string
	for _, r := range reads {
		if r.err == nil {
			ok = append(ok, r.a.ID)
		}
	}
	if len(ok) > 0 {
		if err := ix.Ledger.MarkIndexed(ctx, ok); err != nil {
			return fmt.Errorf("mark archives indexed: %w", err)
		}
		if err := ix.recheckGrantees(ctx, ok, written); err != nil {
			return err
		}
		if err := ix.keepTitles(ctx, reads); err != nil {
			return err
		}
	}
	for _, r := range reads {
		o := outcome{id: r.a.ID, pages: len(r.docs), skipped: r.skipped}
		if r.err != nil {
			o = outcome{id: r.a.ID, reason: r.err.Error()}
			if err := ix.Ledger.RecordIndexFailure(ctx, r.a.ID, o.reason, ix.retryBase(), ix.retryMax()); err != nil {
				return fmt.Errorf("record why archive %s could not be indexed: %w", r.a.ID, err)
			}
			ix.logger().Warn("could not index this archive", "archiveId", r.a.ID, "objectKey", r.a.ObjectKey, "reason", o.reason)
		} else if r.skipped > 0 {
			ix.logger().Warn("skipped malformed pages.jsonl lines", "archiveId", r.a.ID, "lines", r.skipped)
		}
		res.add(o)
		if progress != nil {
			progress()
		}
	}
	return nil
}

// recheckGrantees reads the archives' recorded grantees again, after they
// were marked indexed, and marks those whose grantees changed since they
// were read for indexing again. An admission that gives an indexed archive
// a grantee clears its indexed_at itself; one that commits while the
// archive is being indexed either commits before this read (seen here) or
// Titler keeps each archive's title in the ledger, for the archive list.
type Titler interface {
	// SetTitles sets the titles of the archives (archive id → title).
	SetTitles(ctx context.Context, titles map[string]string) error
}

// MaxTitle is the most bytes of a page's title the ledger keeps.
const MaxTitle = 2048

// keepTitles hands the first page's title of each archive indexed to the
// ledger, when it keeps titles: the list shows it and filters by it.
func (ix *Indexer) keepTitles(ctx context.Context, reads []archiveRead) error {
	t, ok := ix.Ledger.(Titler)
	if !ok {
		return nil
	}
	titles := map[string]string{}
	for _, r := range reads {
		if r.err != nil {
			continue
		}
		title := ""
		if len(r.docs) > 0 {
			title = ledgerTitle(r.docs[0].Title)
		}
		titles[r.a.ID] = title
	}
	if len(titles) == 0 {
		return nil
	}
	if err := t.SetTitles(ctx, titles); err != nil {
		return fmt.Errorf("keep archive titles: %w", err)
	}
	return nil
}

// ledgerTitle is a title as PostgreSQL text holds it: valid UTF-8 without
// NUL, at most MaxTitle bytes (cut at a character boundary).
func ledgerTitle(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= MaxTitle {
		return s
	}
	cut := MaxTitle
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// clears indexed_at after MarkIndexed (it waits for MarkIndexed's row
// lock), so no archive stays marked indexed with grantees its pages lack.
func (ix *Indexer) recheckGrantees(ctx context.Context, ids []string, written map[string][]string) error {
	now, err := ix.Ledger.ArchiveGrantees(ctx, ids)
	if err != nil {
		return fmt.Errorf("read the archives' recorded grantees: %w", err)
	}
	var changed []string
	for _, id := range ids {
		if !slices.Equal(now[id], written[id]) {
			changed = append(changed, id)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	ix.logger().Info("grantees changed while indexing; indexing again", "archives", len(changed))
	if err := ix.Ledger.MarkUnindexed(ctx, changed); err != nil {
		return fmt.Errorf("mark archives for indexing again: %w", err)
	}
	return nil
}

// read turns the archive's pages/pages.jsonl into documents: the ZIP's
// directory and that one entry, read through ranged GETs. Malformed lines
// are skipped and counted; an archive whose lines are all malformed (no
// page, at least one bad line) fails, since indexing it as empty would
// hide that its pages could not be read.
func (ix *Indexer) read(ctx context.Context, a ledger.Archive) ([]Document, int, error) {
	obj, err := ix.Objects.OpenObject(ctx, a.Bucket, a.ObjectKey)
	if err != nil {
		return nil, 0, fmt.Errorf("WACZ s3://%s/%s: %w", a.Bucket, a.ObjectKey, err)
	}
	pr, err := wacz.OpenPages(obj, obj.Size())
	if err != nil {
		return nil, 0, fmt.Errorf("WACZ s3://%s/%s: %w", a.Bucket, a.ObjectKey, err)
	}
	defer pr.Close()
	var docs []Document
	for {
		p, err := pr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("WACZ s3://%s/%s: %w", a.Bucket, a.ObjectKey, err)
		}
		if len(docs) == MaxPagesPerArchive {
			return nil, 0, fmt.Errorf("WACZ s3://%s/%s: more than %d pages in %s", a.Bucket, a.ObjectKey, MaxPagesPerArchive, wacz.PagesPath)
		}
		d := Document{
			ArchiveID: a.ID, Page: len(docs), URL: p.URL, Title: p.Title, Text: p.Text, TextTruncated: p.TextTruncated,
			ObjectKey: a.ObjectKey, SourceURL: a.SourceURL, Labels: a.Labels, CapturedAt: a.CapturedAt.UTC(),
		}
		if p.TextWithheld != "" {
			w := p.TextWithheld
			d.TextWithheld = &w
		}
		docs = append(docs, d)
	}
	st := pr.Stats()
	if len(docs) == 0 && st.Malformed > 0 {
		return nil, 0, fmt.Errorf("WACZ s3://%s/%s: %s has no readable page: %d malformed line(s) (not a JSON object, a member of the wrong type, or no url)",
			a.Bucket, a.ObjectKey, wacz.PagesPath, st.Malformed)
	}
	return docs, st.Malformed, nil
}

func (ix *Indexer) retryBase() time.Duration {
	if ix.RetryBase > 0 {
		return ix.RetryBase
	}
	return time.Minute
}

func (ix *Indexer) retryMax() time.Duration {
	if ix.RetryMax > 0 {
		return ix.RetryMax
	}
	return 24 * time.Hour
}

func (ix *Indexer) logger() *slog.Logger {
	if ix.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return ix.Log
}
