// Package wacz writes and reads WACZ 1.1.1 files: a ZIP holding a WARC of
// what was fetched, a CDXJ index pointing into it, the pages with their
// title and visible text, and a datapackage that hashes every file. It does
// no I/O beyond the io.Writer and io.ReaderAt it is given.
package wacz

import (
	"net/http"
	"time"
)

// Capture is what a capturer saw while loading one or more pages: every
// HTTP exchange in the order it happened, the pages with what was read off
// them, and an optional screenshot. Both engines of pkg/capture produce it;
// Write turns it into a WACZ.
type Capture struct {
	// Exchanges are the request/response pairs, redirects included (each
	// hop is its own exchange with its 3xx status and Location header).
	Exchanges []Exchange
	// Pages are the pages the capture was asked for, in order; the first
	// is the WACZ's main page.
	Pages []Page
	// Screenshot is a PNG of the first page, or nil.
	Screenshot *Screenshot
	// Thumbnail is a small image of the first page (PNG or JPEG), or nil.
	Thumbnail *Thumbnail
	// Created is when the capture finished (datapackage "created").
	Created time.Time
	// Software names the writer, e.g. "ledgerctl v1.2.3".
	Software string
}

// Exchange is one HTTP request and the response to it.
type Exchange struct {
	Method        string      // "GET" when empty
	URL           string      // absolute URL requested
	RequestHeader http.Header // as sent (may be nil)
	Date          time.Time   // when the response arrived
	Status        int         // HTTP status code
	StatusText    string      // reason phrase; http.StatusText(Status) when empty
	Proto         string      // "HTTP/1.1" when empty
	Header        http.Header // response header as received
	// Body is the response body after content decoding (the header's
	// Content-Encoding and Content-Length describe the wire, so Write
	// drops Content-Encoding and rewrites Content-Length to len(Body)).
	Body []byte
	// Truncated is true when a size cap cut Body short; the archive is then
	// incomplete and the URL is listed as truncated.
	Truncated bool
	// IP is the address the response came from (WARC-IP-Address), or "".
	IP string
	// Revisit, when set, says an identical payload is already stored in an
	// earlier record (of this WACZ or another one of the same collection):
	// Write then stores a WARC revisit record of the identical-payload-digest
	// profile (the response's HTTP header, no body) instead of a response
	// record. Body must still be the payload: its digest is the record's
	// WARC-Payload-Digest, and its length the header's Content-Length.
	Revisit *Revisit
}

// Revisit points at the earlier record holding an exchange's payload.
type Revisit struct {
	// RefersToURI and RefersToDate are the original response record's
	// WARC-Target-URI and WARC-Date (to the second).
	RefersToURI  string
	RefersToDate time.Time
	// Container, when not "", names the WACZ holding the original as the
	// replay collection names it (WARC-Refers-To-Container, which
	// ReplayWeb.page reads to load that WACZ's index): a file name ending
	// in ".wacz", without a path.
	Container string
}

// Page is one page as a reader saw it.
type Page struct {
	URL           string    // the URL asked for
	FinalURL      string    // after redirects; URL when empty
	Date          time.Time // when the page was loaded
	Title         string
	Text          string // visible text (Write truncates past MaxTextRunes)
	TextTruncated bool
	// TextWithheld, when set, is why the page's title and text are not in
	// the archive (BrowserHive's DocumentWithheld: url-policy, content-type,
	// no-archive, deny, unattributed); Write then omits both.
	TextWithheld string
	Links        []Link
	// Behaviors, when not nil, is what the capturer did to the page after
	// it loaded and what that added; it is written as the page line's
	// "behaviors" member (any JSON value).
	Behaviors any
	// NeedsJS, when not "", says why the page seems to need JavaScript to
	// show its content (a capturer that ran none); written as the page
	// line's "needsJavaScript".
	NeedsJS string
}

// Link is one link found on a page.
type Link struct {
	Href string `json:"href"` // resolved against the page URL
	Text string `json:"text"`
	Rel  string `json:"rel,omitempty"`
}

// Screenshot is a PNG image of a page.
type Screenshot struct {
	PageURL string // the page it shows
	Date    time.Time
	PNG     []byte
}

// Thumbnail is a small picture of a page (a scaled-down screenshot),
// written as a `urn:thumbnail:<page>` resource record, as Browsertrix does.
type Thumbnail struct {
	PageURL string // the page it shows
	Date    time.Time
	// Mime is "image/jpeg" or "image/png"; Data must be an image of that
	// type (Write checks).
	Mime string
	Data []byte
}

// MaxTextRunes is the most page text pages.jsonl holds for one page; past
// it the text is cut and textTruncated is true (BrowserHive ≥ v13).
const MaxTextRunes = 1_000_000

// MaxTitleRunes is the most of a page title pages.jsonl holds; a longer
// title (only a hostile page has one) is cut without a flag.
const MaxTitleRunes = 10_000
