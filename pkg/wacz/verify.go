package wacz

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Problem is one way a WACZ breaks the rules Check enforces. Rule names
// follow the shared wacz-check tool's where they mean the same.
type Problem struct {
	Rule   string // e.g. "cdxj.record"
	Detail string
}

func (p Problem) String() string { return p.Rule + ": " + p.Detail }

// VerifyError lists every problem Verify found.
type VerifyError struct{ Problems []Problem }

func (e *VerifyError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "wacz: " + strings.Join(parts, "; ")
}

// Verify is Check reduced to an error: nil when the WACZ has no problem,
// a *VerifyError listing them otherwise, or Check's error.
func Verify(r io.ReaderAt, size int64) error {
	problems, err := Check(r, size)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return &VerifyError{Problems: problems}
	}
	return nil
}

// maxCheckEntryBytes bounds what Check inflates of any one entry or record.
const maxCheckEntryBytes = 1 << 30

// Check is the project's own fast structural check of a WACZ 1.1.1 file:
// the datapackage's hashes and sizes and its digest file match the entries;
// archive/ entries and gzipped indexes are STORED; pages.jsonl starts with its
// header and every page has a url and an RFC 3339 ts; every WARC record is
// its own gzip member, parses, and matches its block and payload digests;
// the CDXJ is sorted and each line's offset and length point exactly at the
// gzip member of a record with that URI and date; every response and
// resource is indexed; every page and the main page are in the index.
//
// The error is only for a file that is not a ZIP (ErrNotZip) or a reader
// that fails; everything else is a Problem.
func Check(r io.ReaderAt, size int64) ([]Problem, error) {
	zr, err := openZip(r, size)
	if err != nil {
		return nil, err
	}
	c := &checker{files: map[string][]byte{}, warcs: map[string]map[int64]warcMember{}}
	if err := c.readEntries(zr); err != nil {
		return nil, err
	}
	c.checkDataPackage()
	c.checkPages()
	c.checkWARCs()
	c.checkIndexes()
	return c.problems, nil
}

type checker struct {
	problems []Problem
	names    []string          // entry names in ZIP order, unique
	files    map[string][]byte // uncompressed content by name
	warcs    map[string]map[int64]warcMember
	indexed  map[string]bool // URLs with an index line
	pageURLs []string
}

func (c *checker) fail(rule, format string, args ...any) {
	c.problems = append(c.problems, Problem{Rule: rule, Detail: fmt.Sprintf(format, args...)})
}

func (c *checker) readEntries(zr *zip.Reader) error {
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		if _, dup := c.files[f.Name]; dup {
			c.fail("zip.entries", "%s appears twice", f.Name)
			continue
		}
		if mustStore(f.Name) && f.Method != zip.Store {
			c.fail("zip.store", "%s is compressed (method %d); viewers range-read it only when STORED", f.Name, f.Method)
		}
		data, err := readEntry(f)
		var src *sourceError
		if errors.As(err, &src) {
			return fmt.Errorf("wacz: reading %s: %w", f.Name, src.err)
		}
		if err != nil {
			c.fail("zip.entries", "%s: %v", f.Name, err)
			continue
		}
		c.names = append(c.names, f.Name)
		c.files[f.Name] = data
	}
	return nil
}

// mustStore reports whether WACZ 1.1.1 wants the entry STORED: the files
// of archive/, whose records viewers range-read in place, and the
// compressed indexes (a ZipNum index's gzip blocks). A plain .cdxj, .cdx or
// .idx may be deflated: viewers read it whole.
func mustStore(name string) bool {
	return strings.HasPrefix(name, "archive/") || (strings.HasPrefix(name, "indexes/") && strings.HasSuffix(name, ".gz"))
}

func readEntry(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxCheckEntryBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCheckEntryBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxCheckEntryBytes)
	}
	return data, nil
}

func (c *checker) checkDataPackage() {
	raw, ok := c.files[DataPackage]
	if !ok {
		c.fail("datapackage.present", "no %s", DataPackage)
		return
	}
	var dp map[string]json.RawMessage
	if json.Unmarshal(raw, &dp) != nil || dp == nil {
		c.fail("datapackage.json", "%s is not a JSON object", DataPackage)
		return
	}
	if s, _ := jsonString(dp["profile"]); s != "data-package" {
		c.fail("datapackage.profile", "profile is %s, want \"data-package\"", orAbsent(dp["profile"]))
	}
	if s, _ := jsonString(dp["wacz_version"]); s == "" {
		c.fail("datapackage.wacz_version", "wacz_version is %s", orAbsent(dp["wacz_version"]))
	}
	if u, ok := jsonString(dp["mainPageUrl"]); ok && u != "" {
		c.pageURLs = append(c.pageURLs, u)
	}
	var resources []struct {
		Path  *string `json:"path"`
		Hash  *string `json:"hash"`
		Bytes *int64  `json:"bytes"`
	}
	if json.Unmarshal(dp["resources"], &resources) != nil {
		c.fail("datapackage.resources", "resources is not a list of {path, hash, bytes}")
		return
	}
	listed := map[string]bool{}
	for i, res := range resources {
		if res.Path == nil || res.Hash == nil || res.Bytes == nil {
			c.fail("datapackage.resources", "resources[%d] lacks path, hash or bytes", i)
			continue
		}
		p := *res.Path
		if listed[p] {
			c.fail("datapackage.resources", "%s is listed twice", p)
		}
		listed[p] = true
		data, ok := c.files[p]
		if !ok {
			c.fail("datapackage.resource-missing", "%s is listed but not in the ZIP", p)
			continue
		}
		if *res.Bytes != int64(len(data)) {
			c.fail("datapackage.resource-bytes", "%s: bytes %d, entry has %d", p, *res.Bytes, len(data))
		}
		if want := "sha256:" + hexSHA256(data); *res.Hash != want {
			c.fail("datapackage.resource-hash", "%s: hash %s, entry hashes to %s", p, *res.Hash, want)
		}
	}
	for _, name := range c.names {
		if name != DataPackage && name != DigestPath && !listed[name] {
			c.fail("datapackage.resource-unlisted", "%s is not in resources", name)
		}
	}

	// The digest file is a SHOULD of the spec (BrowserHive writes it only
	// when signing); when present it must match.
	if rawDigest, ok := c.files[DigestPath]; ok {
		var d struct {
			Path string `json:"path"`
			Hash string `json:"hash"`
		}
		switch {
		case json.Unmarshal(rawDigest, &d) != nil:
			c.fail("digest.valid", "%s is not a JSON object with path and hash", DigestPath)
		case d.Path != DataPackage:
			c.fail("digest.valid", "%s names %q, want %q", DigestPath, d.Path, DataPackage)
		case d.Hash != "sha256:"+hexSHA256(raw):
			c.fail("digest.valid", "%s hash %s does not match %s", DigestPath, d.Hash, DataPackage)
		}
	}
}

func (c *checker) checkPages() {
	raw, ok := c.files[PagesPath]
	if !ok {
		c.fail("pages.present", "no %s", PagesPath)
		return
	}
	lines := strings.Split(string(raw), "\n")
	var header struct {
		Format string `json:"format"`
	}
	if json.Unmarshal([]byte(lines[0]), &header) != nil || header.Format != PagesFormat {
		c.fail("pages.header", "first line of %s is not {\"format\":%q,…}", PagesPath, PagesFormat)
	}
	for i, line := range lines[1:] {
		page, kind := parsePageLine([]byte(line))
		switch kind {
		case lineBlank:
			continue
		case linePage:
		default:
			c.fail("pages.entries", "line %d is not a page with a string url", i+2)
			continue
		}
		if _, err := time.Parse(time.RFC3339, page.TS); err != nil {
			c.fail("pages.ts", "line %d: ts %q is not RFC 3339", i+2, page.TS)
		}
		c.pageURLs = append(c.pageURLs, page.URL)
	}
}

// warcMember is one record of a .warc.gz as Check found it.
type warcMember struct {
	length int64
	typ    string
	uri    string
	date   string // 14 digits
}

func (c *checker) checkWARCs() {
	found := false
	for _, name := range c.names {
		if !strings.HasPrefix(name, "archive/") {
			continue
		}
		if !strings.HasSuffix(name, ".warc.gz") {
			c.fail("layout.dirs", "%s in archive/ is not a .warc.gz", name)
			continue
		}
		found = true
		c.warcs[path.Base(name)] = c.walkWARC(name, c.files[name])
	}
	if !found {
		c.fail("archive.present", "no archive/*.warc.gz")
	}
}

// walkWARC reads a .warc.gz member by member: each member must hold
// exactly one record.
func (c *checker) walkWARC(name string, data []byte) map[int64]warcMember {
	members := map[int64]warcMember{}
	br := bytes.NewReader(data)
	for br.Len() > 0 {
		offset := int64(len(data) - br.Len())
		// bytes.Reader is an io.ByteReader, so gzip reads no further than
		// the member's end and br.Len() tells where the next one starts.
		zr, err := gzip.NewReader(br)
		if err != nil {
			c.fail("warc.gzip-members", "%s: no gzip member at offset %d: %v", name, offset, err)
			return members
		}
		zr.Multistream(false)
		record, err := io.ReadAll(io.LimitReader(zr, maxCheckEntryBytes+1))
		if err != nil || len(record) > maxCheckEntryBytes {
			c.fail("warc.gzip-members", "%s: gzip member at offset %d is corrupt or too large: %v", name, offset, err)
			return members
		}
		m, err := parseRecord(record)
		if err != nil {
			c.fail("warc.record", "%s: member at offset %d: %v", name, offset, err)
			if errors.Is(err, errTrailing) {
				c.fail("warc.gzip-members", "%s: member at offset %d holds more than one record", name, offset)
			}
		}
		m.length = int64(len(data)-br.Len()) - offset
		members[offset] = m
	}
	return members
}

var errTrailing = errors.New("bytes after the record's end")

// parseRecord checks one uncompressed WARC record: version line, named
// fields, a block of Content-Length bytes, the closing CRLF CRLF and nothing
// after, and sha256 block and payload digests when given.
func parseRecord(rec []byte) (warcMember, error) {
	var m warcMember
	head, rest, ok := bytes.Cut(rec, []byte("\r\n\r\n"))
	if !ok {
		return m, errors.New("no end of the WARC header")
	}
	lines := strings.Split(string(head), "\r\n")
	if lines[0] != "WARC/1.1" && lines[0] != "WARC/1.0" {
		return m, fmt.Errorf("version line %q is not WARC/1.0 or WARC/1.1", truncateForError(lines[0]))
	}
	fields := map[string]string{}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" {
			return m, fmt.Errorf("header line %q has no name", truncateForError(l))
		}
		fields[strings.ToLower(name)] = strings.TrimSpace(value)
	}
	m.typ = fields["warc-type"]
	m.uri = strings.Trim(fields["warc-target-uri"], "<>")
	if m.typ == "" || fields["warc-record-id"] == "" {
		return m, errors.New("WARC-Type or WARC-Record-ID is missing")
	}
	date, err := time.Parse(time.RFC3339Nano, fields["warc-date"])
	if err != nil {
		return m, fmt.Errorf("WARC-Date %q is not a date", truncateForError(fields["warc-date"]))
	}
	m.date = cdxjTimestamp(date)
	n, err := strconv.ParseInt(fields["content-length"], 10, 64)
	if err != nil || n < 0 || n > int64(len(rest)) {
		return m, fmt.Errorf("Content-Length %q does not fit the record", truncateForError(fields["content-length"]))
	}
	block, tail := rest[:n], rest[n:]
	if string(tail) != "\r\n\r\n" {
		if bytes.HasPrefix(tail, []byte("\r\n\r\n")) {
			return m, errTrailing
		}
		return m, errors.New("the block is not followed by CRLF CRLF")
	}
	if d := fields["warc-block-digest"]; d != "" && !digestMatches(d, block) {
		return m, fmt.Errorf("WARC-Block-Digest %s does not match the block", d)
	}
	// A revisit's payload digest is its original's: the payload is not
	// in the record.
	if d := fields["warc-payload-digest"]; d != "" && !strings.EqualFold(fields["warc-type"], "revisit") {
		payload := block
		if strings.HasPrefix(fields["content-type"], "application/http") {
			_, p, ok := bytes.Cut(block, []byte("\r\n\r\n"))
			if !ok {
				return m, errors.New("the HTTP block has no end of header")
			}
			payload = p
		}
		if !digestMatches(d, payload) {
			return m, fmt.Errorf("WARC-Payload-Digest %s does not match the payload", d)
		}
	}
	return m, nil
}

// digestMatches checks a sha256 digest in hex or base32; digests of other
// algorithms are not checked.
func digestMatches(digest string, data []byte) bool {
	alg, value, ok := strings.Cut(digest, ":")
	if !ok || !strings.EqualFold(alg, "sha256") {
		return true
	}
	sum := sha256.Sum256(data)
	if strings.EqualFold(value, hex.EncodeToString(sum[:])) {
		return true
	}
	b32 := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:])
	return strings.TrimRight(strings.ToUpper(value), "=") == b32
}

func (c *checker) checkIndexes() {
	c.indexed = map[string]bool{}
	covered := map[string]map[int64]bool{}
	found := false
	for _, name := range c.names {
		if !strings.HasPrefix(name, "indexes/") {
			continue
		}
		if !strings.HasSuffix(name, ".cdxj") {
			c.fail("layout.dirs", "%s in indexes/ is not a .cdxj (this check reads plain CDXJ only)", name)
			continue
		}
		found = true
		c.checkIndex(name, covered)
	}
	if !found {
		c.fail("index.present", "no indexes/*.cdxj")
		return
	}
	for file, members := range c.warcs {
		offsets := make([]int64, 0, len(members))
		for off := range members {
			offsets = append(offsets, off)
		}
		sort.Slice(offsets, func(i, j int) bool { return offsets[i] < offsets[j] })
		for _, off := range offsets {
			m := members[off]
			if (m.typ == "response" || m.typ == "resource" || m.typ == "revisit") && !covered[file][off] {
				c.fail("index.coverage", "%s record of %s at %s:%d has no index line", m.typ, m.uri, file, off)
			}
		}
	}
	for _, u := range c.pageURLs {
		if !c.indexed[u] {
			c.fail("pages.indexed", "page %s has no index line, so it cannot replay", u)
		}
	}
}

func (c *checker) checkIndex(name string, covered map[string]map[int64]bool) {
	sc := bufio.NewScanner(bytes.NewReader(c.files[name]))
	sc.Buffer(nil, maxCheckEntryBytes)
	prev := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		e, err := ParseCDXJLine(line)
		if err != nil {
			c.fail("cdxj.syntax", "%s line %d: %v", name, n, err)
			continue
		}
		if key := e.sortKey(); key < prev {
			c.fail("cdxj.sorted", "%s line %d sorts before the line above it", name, n)
		} else {
			prev = key
		}
		c.indexed[e.URL] = true
		members, ok := c.warcs[e.Filename]
		if !ok {
			c.fail("cdxj.filename", "%s line %d: %q is not a WARC in archive/", name, n, e.Filename)
			continue
		}
		m, ok := members[e.Offset]
		switch {
		case !ok:
			c.fail("cdxj.record", "%s line %d: no record starts at %s:%d", name, n, e.Filename, e.Offset)
			continue
		case m.length != e.Length:
			c.fail("cdxj.record", "%s line %d: length %d, the gzip member at %d is %d bytes", name, n, e.Length, e.Offset, m.length)
		case m.uri != e.URL:
			c.fail("cdxj.record", "%s line %d: url %s, the record at %d is for %s", name, n, e.URL, e.Offset, m.uri)
		case m.date != e.Timestamp[:14]:
			c.fail("cdxj.timestamp", "%s line %d: timestamp %s, the record is dated %s", name, n, e.Timestamp, m.date)
		}
		if covered[e.Filename] == nil {
			covered[e.Filename] = map[int64]bool{}
		}
		covered[e.Filename][e.Offset] = true
	}
	if err := sc.Err(); err != nil {
		c.fail("cdxj.syntax", "%s: %v", name, err)
	}
}

func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if raw == nil || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func orAbsent(raw json.RawMessage) string {
	if raw == nil {
		return "absent"
	}
	return truncateForError(string(raw))
}

func truncateForError(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
