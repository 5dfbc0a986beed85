package ledger

import "time"

// StoredPayload is one payload a capture of a crawl stored in full: the
// response record holding it, and the WACZ that record is in (the crawl's
// payload index, crawl_payloads; pkg/capture writes a later copy as a
// revisit of it).
type StoredPayload struct {
	// Digest is the record's WARC-Payload-Digest ("sha256:<hex>").
	Digest string
	// URL and Date are the record's WARC-Target-URI and WARC-Date (to the
	// second).
	URL  string
	Date time.Time
	// Container is the name of the WACZ holding it, as the crawl's replay
	// collection names it (the capture job's WACZ name).
	Container string
}
