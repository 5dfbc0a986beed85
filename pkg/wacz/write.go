package wacz

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/flate"
	"golang.org/x/net/http/httpguts"
)

// The entries of a WACZ as Write lays it out.
const (
	WARCPath       = "archive/data.warc.gz"
	IndexPath      = "indexes/index.cdxj"
	PagesPath      = "pages/pages.jsonl"
	DataPackage    = "datapackage.json"
	DigestPath     = "datapackage-digest.json"
	WACZVersion    = "1.1.1"
	warcFilename   = "data.warc.gz" // CDXJ filename, relative to archive/
	screenshotMime = "image/png"
)

// ErrInvalidCapture marks a Capture that Write refuses; the message names
// the field.
var ErrInvalidCapture = errors.New("wacz: invalid capture")

// Summary is what Write reports about the WACZ it wrote.
type Summary struct {
	Bytes  int64  // size of the WACZ
	SHA256 string // hex SHA-256 of the whole WACZ
	// TruncatedURLs are the URLs whose body a size cap cut short, sorted
	// and unique; non-empty means the archive is incomplete.
	TruncatedURLs []string
	// BodylessURLs are the URLs seen only as 304 Not Modified, never as 200,
	// sorted and unique: their body never crossed the wire (BrowserHive's
	// completeness.bodylessUrls).
	BodylessURLs []string
	Pages        int // page lines in pages.jsonl
	Records      int // WARC records, warcinfo included
	// Revisits are the revisit records written, and RevisitBytes the
	// payload bytes they stand for (stored in an earlier record instead).
	Revisits     int
	RevisitBytes int64
}

// Complete reports what BrowserHive's completeness.complete says: no body
// is missing.
func (s Summary) Complete() bool { return len(s.TruncatedURLs) == 0 && len(s.BodylessURLs) == 0 }

// recordNS is the namespace of the name-based UUIDs Write gives records and
// pages, so equal captures get equal ids and different ones different ids.
var recordNS = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/capture-ledger/ledgerctl/pkg/wacz"))

// Write writes c as a WACZ 1.1.1 file to w: archive/data.warc.gz (warcinfo,
// then a response and a request record per exchange, then the screenshot and
// the thumbnail as resource records), indexes/index.cdxj, pages/pages.jsonl,
// datapackage.json and datapackage-digest.json. The WARC is STORED so
// viewers can range-read its records in place; the other entries are
// deflated when that makes them smaller (WACZ 1.1.1 allows either for a
// plain .cdxj, and viewers read a CDXJ index whole). The same Capture always
// gives the same bytes.
//
// A Capture with a missing or malformed required field is refused with
// ErrInvalidCapture before anything is written to w.
func Write(w io.Writer, c Capture) (Summary, error) {
	if err := validate(c); err != nil {
		return Summary{}, err
	}
	warc, index, err := buildWARC(c)
	if err != nil {
		return Summary{}, fmt.Errorf("wacz: writing the WARC: %w", err)
	}
	defer warc.release()
	pages, err := encodePages(c)
	if err != nil {
		return Summary{}, fmt.Errorf("wacz: writing pages.jsonl: %w", err)
	}
	files := []zipFile{
		{path: WARCPath, data: warc.out.Bytes(), store: true},
		{path: IndexPath, data: index},
		{path: PagesPath, data: pages},
	}
	dp, err := dataPackage(c, files)
	if err != nil {
		return Summary{}, err
	}
	digest, err := jsonFile(digestFile{Path: DataPackage, Hash: "sha256:" + hexSHA256(dp)})
	if err != nil {
		return Summary{}, err
	}
	files = append(files, zipFile{path: DataPackage, data: dp}, zipFile{path: DigestPath, data: digest})

	sum := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(w, sum)}
	if err := writeZip(cw, files, c.Created); err != nil {
		return Summary{}, fmt.Errorf("wacz: writing the ZIP: %w", err)
	}
	truncated, bodyless := completeness(c.Exchanges)
	return Summary{
		Bytes:         cw.n,
		SHA256:        hex.EncodeToString(sum.Sum(nil)),
		TruncatedURLs: truncated,
		BodylessURLs:  bodyless,
		Pages:         len(c.Pages),
		Records:       warc.records,
		Revisits:      warc.revisits,
		RevisitBytes:  warc.revisitBytes,
	}, nil
}

func validate(c Capture) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidCapture}, args...)...)
	}
	if !validTime(c.Created) {
		return bad("created %v is not a date between years 1000 and 9999", c.Created)
	}
	for i, x := range c.Exchanges {
		if _, err := httpURL(x.URL); err != nil {
			return bad("exchanges[%d].url: %v", i, err)
		}
		if x.Method != "" && !httpguts.ValidHeaderFieldName(x.Method) {
			return bad("exchanges[%d].method %q is not an HTTP method", i, x.Method)
		}
		if x.Status < 100 || x.Status > 999 {
			return bad("exchanges[%d].status %d is not an HTTP status", i, x.Status)
		}
		if !validTime(x.Date) {
			return bad("exchanges[%d].date %v is not a date between years 1000 and 9999", i, x.Date)
		}
		if r := x.Revisit; r != nil {
			if _, err := httpURL(r.RefersToURI); err != nil {
				return bad("exchanges[%d].revisit.refersToUri: %v", i, err)
			}
			if !validTime(r.RefersToDate) {
				return bad("exchanges[%d].revisit.refersToDate %v is not a date between years 1000 and 9999", i, r.RefersToDate)
			}
			if r.Container != "" && !ValidContainer(r.Container) {
				return bad("exchanges[%d].revisit.container %q is not a file name ending in .wacz", i, r.Container)
			}
			if x.Truncated {
				return bad("exchanges[%d].revisit: a truncated body cannot be a revisit", i)
			}
		}
	}
	for i, p := range c.Pages {
		if _, err := httpURL(p.URL); err != nil {
			return bad("pages[%d].url: %v", i, err)
		}
		if !validTime(p.Date) {
			return bad("pages[%d].date %v is not a date between years 1000 and 9999", i, p.Date)
		}
	}
	if s := c.Screenshot; s != nil {
		if _, err := httpURL(s.PageURL); err != nil {
			return bad("screenshot.pageUrl: %v", err)
		}
		if len(s.PNG) == 0 {
			return bad("screenshot.png is empty")
		}
		if !validTime(s.Date) {
			return bad("screenshot.date %v is not a date between years 1000 and 9999", s.Date)
		}
	}
	if th := c.Thumbnail; th != nil {
		if _, err := httpURL(th.PageURL); err != nil {
			return bad("thumbnail.pageUrl: %v", err)
		}
		if !validTime(th.Date) {
			return bad("thumbnail.date %v is not a date between years 1000 and 9999", th.Date)
		}
		if _, err := CheckImage(th.Data, th.Mime); err != nil {
			return bad("thumbnail.data: %v", err)
		}
	}
	return nil
}

// ValidContainer reports whether name can be a revisit's container: a
// plain file name (letters, digits, '.', '_', '-'; at most 255 bytes)
// ending in ".wacz".
func ValidContainer(name string) bool {
	if len(name) <= len(".wacz") || len(name) > 255 || path.Ext(name) != ".wacz" || name[0] == '.' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validTime keeps dates inside what a 14-digit timestamp can say.
func validTime(t time.Time) bool {
	y := t.UTC().Year()
	return y >= 1000 && y <= 9999
}

// httpURL parses an absolute http(s) URL with a host.
func httpURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL", raw)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	return u, nil
}

// buildWARC writes the records and returns the WARC and its sorted CDXJ.
func buildWARC(c Capture) (*warcWriter, []byte, error) {
	// Most bodies are images and fonts that do not compress; text shrinks.
	hint := 4 << 10
	for _, x := range c.Exchanges {
		hint += 1 << 10
		if x.Revisit == nil {
			hint += len(x.Body)
		}
	}
	if c.Screenshot != nil {
		hint += len(c.Screenshot.PNG) + 1<<10
	}
	if c.Thumbnail != nil {
		hint += len(c.Thumbnail.Data) + 1<<10
	}
	ww := newWARCWriter(hint)
	ok := false
	defer func() {
		if !ok {
			ww.release()
		}
	}()
	created := c.Created.UTC()
	software := c.Software
	if software == "" {
		software = "ledgerctl"
	}
	// WARC 1.1's warcinfo fields are recommendations; conformsTo would
	// repeat what format and every record's version line say, in a line
	// that is 46 of the record's 344 bytes gzipped.
	info := []byte("software: " + cleanValue(software) + "\r\n" +
		"format: WARC File Format 1.1\r\n")
	if _, err := ww.add([]warcField{
		{"WARC-Type", "warcinfo"},
		{"WARC-Record-ID", recordID(created, 0, "warcinfo", info)},
		{"WARC-Date", warcDate(created)},
		{"WARC-Filename", warcFilename},
		{"Content-Type", "application/warc-fields"},
		{"WARC-Block-Digest", sha256Digest(info)},
	}, info); err != nil {
		return nil, nil, err
	}

	var index []CDXJEntry
	for i, x := range c.Exchanges {
		u, _ := httpURL(x.URL) // validated
		date, stamp := warcDate(x.Date), cdxjTimestamp(x.Date)
		if x.Revisit != nil {
			// A revisit is dated to the millisecond (WARC-Date with a
			// fraction, a 17-digit CDXJ timestamp): ReplayWeb.page keys
			// what it indexes by URL and time, so a revisit dated the
			// same second as its original at the same URL, in another
			// WACZ of the collection, would hide it.
			date, stamp = warcDateMilli(x.Date), cdxjTimestampMilli(x.Date)
		}
		head := responseHead(x)
		payload := sha256Digest(x.Body)
		typ, body, mime := "response", x.Body, mediaType(x.Header)
		if x.Revisit != nil {
			// The HTTP header stays (what this response said); the
			// payload is the original's.
			typ, body, mime = "revisit", nil, "warc/revisit"
			ww.revisits++
			ww.revisitBytes += int64(len(x.Body))
		}
		block := sha256Digest(head, body)
		respID := recordID(created, 2*i+1, typ, []byte(x.URL+"\n"+block))
		fields := []warcField{
			{"WARC-Type", typ},
			{"WARC-Record-ID", respID},
			{"WARC-Date", date},
			{"WARC-Target-URI", x.URL},
		}
		if r := x.Revisit; r != nil {
			fields = append(fields,
				warcField{"WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"},
				warcField{"WARC-Refers-To-Target-URI", r.RefersToURI},
				warcField{"WARC-Refers-To-Date", warcDate(r.RefersToDate)},
			)
			if r.Container != "" {
				fields = append(fields, warcField{"WARC-Refers-To-Container", r.Container})
			}
		}
		if x.IP != "" {
			fields = append(fields, warcField{"WARC-IP-Address", cleanValue(x.IP)})
		}
		if x.Truncated {
			fields = append(fields, warcField{"WARC-Truncated", "length"})
		}
		fields = append(fields,
			warcField{"Content-Type", "application/http;msgtype=response"},
			warcField{"WARC-Payload-Digest", payload},
			warcField{"WARC-Block-Digest", block},
		)
		m, err := ww.add(fields, head, body)
		if err != nil {
			return nil, nil, err
		}
		index = append(index, CDXJEntry{
			Key: SURT(x.URL), Timestamp: stamp, URL: x.URL,
			Mime: mime, Status: x.Status, Digest: payload,
			Offset: m.offset, Length: m.length, Filename: warcFilename,
		})

		if x.Revisit != nil {
			// No request record: replay does not read one for a GET, and
			// in a crawl the revisits are most records, so theirs would
			// be a third of a page's WARC.
			continue
		}
		req := requestHead(x, u)
		if _, err := ww.add([]warcField{
			{"WARC-Type", "request"},
			{"WARC-Record-ID", recordID(created, 2*i+2, "request", req)},
			{"WARC-Date", date},
			{"WARC-Target-URI", x.URL},
			{"WARC-Concurrent-To", respID},
			{"Content-Type", "application/http;msgtype=request"},
			{"WARC-Block-Digest", sha256Digest(req)},
		}, req); err != nil {
			return nil, nil, err
		}
	}

	// urn:view:<page> and urn:thumbnail:<page> are how Browsertrix and
	// ArchiveWeb.page name the screenshot of a page's viewport and its
	// small picture: resource records whose block is the image.
	addImage := func(seq int, uri string, at time.Time, mime string, data []byte) error {
		digest := sha256Digest(data)
		m, err := ww.add([]warcField{
			{"WARC-Type", "resource"},
			{"WARC-Record-ID", recordID(created, seq, "resource", []byte(uri+"\n"+digest))},
			{"WARC-Date", warcDate(at)},
			{"WARC-Target-URI", uri},
			{"Content-Type", mime},
			{"WARC-Payload-Digest", digest},
			{"WARC-Block-Digest", digest},
		}, data)
		if err != nil {
			return err
		}
		index = append(index, CDXJEntry{
			Key: SURT(uri), Timestamp: cdxjTimestamp(at), URL: uri,
			Mime: mime, Status: http.StatusOK, Digest: digest,
			Offset: m.offset, Length: m.length, Filename: warcFilename,
		})
		return nil
	}
	if s := c.Screenshot; s != nil {
		if err := addImage(2*len(c.Exchanges)+1, ViewPrefix+s.PageURL, s.Date, screenshotMime, s.PNG); err != nil {
			return nil, nil, err
		}
	}
	if th := c.Thumbnail; th != nil {
		if err := addImage(2*len(c.Exchanges)+2, ThumbnailPrefix+th.PageURL, th.Date, th.Mime, th.Data); err != nil {
			return nil, nil, err
		}
	}

	sort.SliceStable(index, func(i, j int) bool { return index[i].sortKey() < index[j].sortKey() })
	var cdxj []byte
	for _, e := range index {
		cdxj = e.appendLine(cdxj)
	}
	ok = true
	return ww, cdxj, nil
}

// recordID is a name-based urn:uuid of the capture time, the record's place
// in the WARC and what it holds.
func recordID(created time.Time, seq int, typ string, content []byte) string {
	name := created.Format(time.RFC3339Nano) + "\n" + strconv.Itoa(seq) + "\n" + typ + "\n"
	return "<urn:uuid:" + uuid.NewSHA1(recordNS, append([]byte(name), content...)).String() + ">"
}

// pageID is a name-based UUID for the i-th page of a capture.
func pageID(created time.Time, i int, pageURL string) string {
	name := "page\n" + created.UTC().Format(time.RFC3339Nano) + "\n" + strconv.Itoa(i) + "\n" + pageURL
	return uuid.NewSHA1(recordNS, []byte(name)).String()
}

// completeness lists the truncated and the bodyless URLs of the exchanges.
func completeness(xs []Exchange) (truncated, bodyless []string) {
	seen304, seen200 := map[string]bool{}, map[string]bool{}
	cut := map[string]bool{}
	for _, x := range xs {
		if x.Truncated {
			cut[x.URL] = true
		}
		switch x.Status {
		case http.StatusNotModified:
			seen304[x.URL] = true
		case http.StatusOK:
			seen200[x.URL] = true
		}
	}
	truncated, bodyless = []string{}, []string{}
	for u := range cut {
		truncated = append(truncated, u)
	}
	for u := range seen304 {
		if !seen200[u] {
			bodyless = append(bodyless, u)
		}
	}
	sort.Strings(truncated)
	sort.Strings(bodyless)
	return truncated, bodyless
}

// zipFile is one entry to write.
type zipFile struct {
	path  string
	data  []byte
	store bool
}

// resource is one file of datapackage.json.
type resource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
}

type dataPackageFile struct {
	Profile      string     `json:"profile"`
	WACZVersion  string     `json:"wacz_version"`
	Title        string     `json:"title"`
	Created      string     `json:"created"`
	Software     string     `json:"software"`
	MainPageURL  string     `json:"mainPageUrl,omitempty"`
	MainPageDate string     `json:"mainPageDate,omitempty"`
	Resources    []resource `json:"resources"`
}

type digestFile struct {
	Path string `json:"path"`
	Hash string `json:"hash"`
}

// dataPackage renders datapackage.json over the files already laid out.
func dataPackage(c Capture, files []zipFile) ([]byte, error) {
	dp := dataPackageFile{
		Profile:     "data-package",
		WACZVersion: WACZVersion,
		Title:       "ledgerctl capture",
		Created:     formatTS(c.Created),
		Software:    c.Software,
		Resources:   []resource{},
	}
	if dp.Software == "" {
		dp.Software = "ledgerctl"
	}
	if len(c.Pages) > 0 {
		main := c.Pages[0]
		dp.MainPageURL = main.URL
		dp.MainPageDate = formatTS(main.Date)
		dp.Title = main.URL
		if main.TextWithheld == "" && main.Title != "" {
			dp.Title = main.Title
		}
	}
	for _, f := range files {
		dp.Resources = append(dp.Resources, resource{
			Name: path.Base(f.path), Path: f.path,
			Hash: "sha256:" + hexSHA256(f.data), Bytes: int64(len(f.data)),
		})
	}
	return jsonFile(dp)
}

// jsonFile renders v as compact JSON with a trailing newline (indented,
// datapackage.json deflates about 5% larger, and the digest file, too small
// to deflate, is 9 bytes longer).
func jsonFile(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("wacz: encoding JSON: %w", err)
	}
	return buf.Bytes(), nil
}

func hexSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// writeZip writes the entries in order, dated modified. Every entry is
// written raw with its CRC-32 and sizes in the local header: no data
// descriptor, so a range reader finds an entry's data from its local header
// alone, and no extra field (archive/zip's extended timestamp would add 9
// bytes to each header; the MS-DOS date of the headers stays, and
// datapackage.json's created says the time exactly). An entry to compress
// is deflated here and STORED instead when that does not make it smaller.
func writeZip(w io.Writer, files []zipFile, modified time.Time) error {
	zw := zip.NewWriter(w)
	date, tm := msDosTime(modified.UTC())
	var deflated bytes.Buffer
	for _, f := range files {
		// Version 2.0 (what archive/zip's CreateHeader writes; CreateRaw
		// leaves it to the caller): DEFLATE, and the least a reader needs.
		hdr := &zip.FileHeader{Name: f.path, Method: zip.Store, ModifiedDate: date, ModifiedTime: tm,
			CreatorVersion: zipVersion20, ReaderVersion: zipVersion20}
		hdr.SetMode(0o644)
		data := f.data
		if !f.store {
			deflated.Reset()
			if err := deflate(&deflated, f.data); err != nil {
				return fmt.Errorf("%s: %w", f.path, err)
			}
			if deflated.Len() < len(f.data) {
				hdr.Method, data = zip.Deflate, deflated.Bytes()
			}
		}
		hdr.CRC32 = crc32.ChecksumIEEE(f.data)
		hdr.CompressedSize64 = uint64(len(data))
		hdr.UncompressedSize64 = uint64(len(f.data))
		dst, err := zw.CreateRaw(hdr)
		if err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
		if _, err := dst.Write(data); err != nil {
			return fmt.Errorf("%s: %w", f.path, err)
		}
	}
	return zw.Close()
}

// flatePool holds the DEFLATE writers of the ZIP's compressed entries
// (pages.jsonl, the index and the datapackage files): a new one, with its
// tables, for every entry of every WACZ would cost more than compressing it.
var flatePool = sync.Pool{New: func() any { fw, _ := flate.NewWriter(nil, gzipLevel); return fw }}

// deflate appends data, compressed, to dst.
func deflate(dst *bytes.Buffer, data []byte) error {
	fw := flatePool.Get().(*flate.Writer)
	defer flatePool.Put(fw)
	fw.Reset(dst)
	if _, err := fw.Write(data); err != nil {
		return err
	}
	return fw.Close()
}

// zipVersion20 is ZIP specification version 2.0.
const zipVersion20 = 20

// msDosTime is t as the ZIP local header's date and time fields (two-second
// resolution, years 1980 to 2107 only).
func msDosTime(t time.Time) (date, tm uint16) {
	if t.Year() < 1980 {
		t = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if t.Year() > 2107 {
		t = time.Date(2107, 12, 31, 23, 59, 58, 0, time.UTC)
	}
	date = uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9)
	tm = uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)
	return date, tm
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
