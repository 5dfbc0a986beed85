package capture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// MinRevisitPayload is the smallest payload written as a revisit: below it
// the revisit record (the HTTP header and the WARC fields naming the
// original) saves next to nothing.
const MinRevisitPayload = 1024

// StoredPayload is one payload a crawl already stored in full.
type StoredPayload = ledger.StoredPayload

// Payloads is a crawl's index of the payloads its captures stored in full,
// by payload digest. Run asks it before writing a crawl's WACZ, and tells
// it what the WACZ stored once the WACZ and its links file are uploaded.
type Payloads interface {
	// StoredPayloads returns those of digests the crawl already stored,
	// by digest.
	StoredPayloads(ctx context.Context, crawlID string, digests []string) (map[string]StoredPayload, error)
	// RememberPayloads records payloads stored by one WACZ of the crawl;
	// a digest already recorded keeps its first record.
	RememberPayloads(ctx context.Context, crawlID string, stored []StoredPayload) error
}

// DedupStats is what deduplication did to one WACZ.
type DedupStats struct {
	// Revisits are the exchanges written as revisit records, and
	// RevisitBytes the payload bytes they did not store again.
	Revisits     int
	RevisitBytes int64
	// Err, when not "", is why the index could not be asked or told
	// (the WACZ then stores every payload, or its payloads are not offered
	// to later captures): the capture itself is not affected.
	Err string
}

// revisitCandidate reports whether exchange i of c may be written as a
// revisit: a complete 200 answer to a GET, of at least MinRevisitPayload
// bytes, that is not one of the capture's pages (an archive opened alone
// always holds its own pages' documents).
func revisitCandidate(c wacz.Capture, x wacz.Exchange) bool {
	if (x.Method != "" && x.Method != http.MethodGet) || x.Status != http.StatusOK || x.Truncated ||
		len(x.Body) < MinRevisitPayload || x.Revisit != nil {
		return false
	}
	for _, p := range c.Pages {
		if x.URL == p.URL || x.URL == p.FinalURL {
			return false
		}
	}
	return true
}

func payloadDigest(body []byte) string {
	s := sha256.Sum256(body)
	return "sha256:" + hex.EncodeToString(s[:])
}

// dedup marks the exchanges of c whose payload the crawl (or an earlier
// exchange of c) already stored as revisits of that record, and returns
// the payloads c stores in full that later captures may refer to.
//
// A revisit of the same URL dated the same millisecond as a record of
// whole seconds would share its original's place in ReplayWeb.page's
// index (URL and time); such a payload is stored again instead.
func dedup(ctx context.Context, idx Payloads, crawlID, container string, c *wacz.Capture) ([]StoredPayload, DedupStats, error) {
	var st DedupStats
	digests := make([]string, len(c.Exchanges))
	var ask []string
	seen := map[string]bool{}
	for i, x := range c.Exchanges {
		if !revisitCandidate(*c, x) {
			continue
		}
		d := payloadDigest(x.Body)
		digests[i] = d
		if !seen[d] {
			seen[d] = true
			ask = append(ask, d)
		}
	}
	if len(ask) == 0 {
		return nil, st, nil
	}
	known, err := idx.StoredPayloads(ctx, crawlID, ask)
	if err != nil {
		return nil, st, err
	}
	if known == nil {
		known = map[string]StoredPayload{}
	}
	var stored []StoredPayload
	for i := range c.Exchanges {
		d := digests[i]
		if d == "" {
			continue
		}
		x := &c.Exchanges[i]
		orig, ok := known[d]
		if ok && !(orig.URL == x.URL && x.Date.Truncate(time.Millisecond).Equal(orig.Date.Truncate(time.Second))) {
			x.Revisit = &wacz.Revisit{RefersToURI: orig.URL, RefersToDate: orig.Date, Container: orig.Container}
			st.Revisits++
			st.RevisitBytes += int64(len(x.Body))
			continue
		}
		if ok {
			continue // stored again; the first copy stays the one referred to
		}
		// The first copy in this WACZ: later exchanges of this capture
		// and later captures of the crawl refer to it.
		p := StoredPayload{Digest: d, URL: x.URL, Date: x.Date.UTC().Truncate(time.Second), Container: container}
		known[d] = p
		stored = append(stored, p)
	}
	return stored, st, nil
}
