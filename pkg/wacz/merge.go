package wacz

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"path"
	"slices"
	"strings"
	"time"
)

// Part is one WACZ to merge: Name tells its files apart in the merged one
// (letters, digits, '.', '_', '-'; an archive id, say), R and Size are its
// bytes. When Open is set, R and Size are not used: Merge calls Open once,
// when it reaches the part, and keeps nothing of it afterwards, so what a
// reader caches of a part is let go as soon as the part has been read.
type Part struct {
	Name string
	R    io.ReaderAt
	Size int64
	Open func() (io.ReaderAt, int64, error)
}

// zip opens the part as a ZIP. A part that is not one is ErrMergeInput; a
// failed read is the reader's error.
func (p Part) zip() (*zip.Reader, error) {
	r, size := p.R, p.Size
	if p.Open != nil {
		var err error
		if r, size, err = p.Open(); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	zr, err := zip.NewReader(r, size)
	if errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrAlgorithm) || errors.Is(err, zip.ErrChecksum) {
		return nil, fmt.Errorf("%w: %s: not a ZIP: %v", ErrMergeInput, p.Name, err)
	}
	if err != nil { // reading it failed
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	return zr, nil
}

// isPages is an entry of a part's page lists.
func isPages(f *zip.File) bool {
	dir, base := path.Split(f.Name)
	return dir == "pages/" && strings.HasSuffix(base, ".jsonl")
}

// MergeSummary says what Merge wrote.
type MergeSummary struct {
	Parts, WARCs, Pages, IndexLines int
	Bytes                           int64
	SHA256                          string
}

// Limits of what Merge reads of one part's index and page list, so that a
// hostile part cannot make it hold more than a page's worth per line.
const (
	maxMergeIndexLine = 64 << 10
	maxMergePageLine  = 8 << 20
	// maxMergeIndexLines bounds the index held in memory to sort it (about
	// 200 bytes a line).
	maxMergeIndexLines = 1_000_000
)

// ErrMergeInput is a part Merge cannot read: not a WACZ, a compressed
// (ZipNum) index, a line that is not an index entry or a page. The error
// names the part and what is wrong, and wraps a failed read of the part
// too (so that the reader's own error can still be told).
var ErrMergeInput = errors.New("wacz: cannot merge")

// Merge writes to w one WACZ 1.1.1 holding the parts' captures: every
// part's WARC files as they are (renamed archive/<part>-<file>, their bytes
// copied without being recompressed), one CDXJ index of all their records
// pointing at the renamed files, one page list of all their pages, and a
// datapackage.json naming title, whose main page is the first part's first
// page. progress, when set, is called as each part is about to be read
// (done parts of total). A part's datapackage and any other file it holds (a
// thumbnail) are left out. A part whose index is ZipNum (indexes/*.cdx.gz),
// or that has no CDXJ index, is ErrMergeInput.
func Merge(w io.Writer, created time.Time, title, software string, parts []Part, progress func(done, total int)) (MergeSummary, error) {
	var sum MergeSummary
	for i, p := range parts {
		if !validPartName(p.Name) {
			return sum, fmt.Errorf("%w: part %d: name %q is not letters, digits, '.', '_' and '-'", ErrMergeInput, i, p.Name)
		}
		for _, q := range parts[:i] {
			if q.Name == p.Name {
				return sum, fmt.Errorf("%w: two parts are named %q", ErrMergeInput, p.Name)
			}
		}
	}
	digest := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(w, digest)}
	zw := zip.NewWriter(cw)
	var (
		resources       []resource
		index           []CDXJEntry
		indexBytes      int
		mainURL, mainTS string
	)
	// The page list is deflated as each part is read, into a spool (memory,
	// then a temporary file): a page line holds the page's text, too much
	// to keep uncompressed for a whole crawl, and a part is read once.
	pages, err := newPageSpool(pageSpoolMemory)
	if err != nil {
		return sum, err
	}
	defer pages.Close()
	for i, p := range parts {
		if progress != nil {
			progress(i, len(parts))
		}
		zr, err := p.zip()
		if err != nil {
			return sum, err
		}
		// Its pages first: a part whose page list is malformed stops the
		// merge before any of its WARCs is copied. (The spool's own
		// failure, a full disk, is not the part's.)
		var spoolErr error
		for _, f := range zr.File {
			if !isPages(f) {
				continue
			}
			err := eachLine(f, maxMergePageLine, func(n int, line []byte) error {
				// Judged as a reader of the page list judges it.
				page, kind := parsePageLine(line)
				switch kind {
				case lineHeader:
					return nil
				case lineMalformed:
					return fmt.Errorf("line %d is not a page: not a JSON object, a member of the wrong type, or no url", n)
				}
				if sum.Pages == 0 {
					mainURL, mainTS = page.URL, page.TS
				}
				sum.Pages++
				spoolErr = pages.line(line)
				return spoolErr
			})
			if spoolErr != nil {
				return sum, spoolErr
			}
			if err != nil {
				return sum, fmt.Errorf("%w: %s: %s: %w", ErrMergeInput, p.Name, f.Name, err)
			}
		}
		renamed := map[string]string{}
		var cdxj []*zip.File
		for _, f := range zr.File {
			switch dir, base := path.Split(f.Name); {
			case dir == "archive/" && (strings.HasSuffix(base, ".warc.gz") || strings.HasSuffix(base, ".warc")):
				if !validPartName(base) || renamed[base] != "" {
					return sum, fmt.Errorf("%w: %s: %q is not a plain file name, or names a second WARC file", ErrMergeInput, p.Name, f.Name)
				}
				name := p.Name + "-" + base
				r, err := copyEntry(zw, f, "archive/"+name, created)
				if err != nil {
					return sum, fmt.Errorf("%s: %s: %w", p.Name, f.Name, err)
				}
				renamed[base] = name
				resources = append(resources, r)
				sum.WARCs++
			case dir == "indexes/" && strings.HasSuffix(base, ".cdxj"):
				cdxj = append(cdxj, f)
			case dir == "indexes/" && (strings.HasSuffix(base, ".cdx.gz") || strings.HasSuffix(base, ".idx")):
				return sum, fmt.Errorf("%w: %s: its index %s is compressed (ZipNum), which merging does not read", ErrMergeInput, p.Name, f.Name)
			}
		}
		if len(cdxj) == 0 {
			return sum, fmt.Errorf("%w: %s: no CDXJ index (indexes/*.cdxj)", ErrMergeInput, p.Name)
		}
		for _, f := range cdxj {
			err := eachLine(f, maxMergeIndexLine, func(n int, line []byte) error {
				e, err := ParseCDXJLine(string(line))
				if err != nil {
					return fmt.Errorf("line %d: %w", n, err)
				}
				name, ok := renamed[e.Filename]
				if !ok {
					return fmt.Errorf("line %d: filename %q is not a WARC file of the archive", n, e.Filename)
				}
				if len(index) >= maxMergeIndexLines {
					return fmt.Errorf("the merged index would pass %d lines", maxMergeIndexLines)
				}
				e.Filename = name
				index = append(index, e)
				// The line again, with the longer file name: the merged
				// index's buffer is made once at its size.
				indexBytes += len(line) + len(p.Name) + 1
				return nil
			})
			if err != nil {
				return sum, fmt.Errorf("%w: %s: %s: %w", ErrMergeInput, p.Name, f.Name, err)
			}
		}
		sum.Parts++
	}
	slices.SortStableFunc(index, func(a, b CDXJEntry) int { return strings.Compare(a.sortKey(), b.sortKey()) })
	lines := make([]byte, 0, indexBytes+len(index))
	for _, e := range index {
		lines = e.appendLine(lines)
	}
	sum.IndexLines = len(index)
	r, err := writeEntry(zw, IndexPath, lines, created)
	if err != nil {
		return sum, err
	}
	resources = append(resources, r)
	r, err = pages.writeTo(zw, created)
	if err != nil {
		return sum, err
	}
	resources = append(resources, r)
	dp, err := jsonFile(dataPackageFile{
		Profile: "data-package", WACZVersion: WACZVersion, Title: title,
		Created: formatTS(created), Software: software, Resources: resources,
		// The first part's first page opens the collection.
		MainPageURL: mainURL, MainPageDate: mainTS,
	})
	if err != nil {
		return sum, err
	}
	dd, err := jsonFile(digestFile{Path: DataPackage, Hash: "sha256:" + hexSHA256(dp)})
	if err != nil {
		return sum, err
	}
	for _, f := range []zipFile{{path: DataPackage, data: dp}, {path: DigestPath, data: dd}} {
		if _, err := writeEntry(zw, f.path, f.data, created); err != nil {
			return sum, err
		}
	}
	if err := zw.Close(); err != nil {
		return sum, fmt.Errorf("wacz: writing the ZIP: %w", err)
	}
	sum.Bytes, sum.SHA256 = cw.n, hex.EncodeToString(digest.Sum(nil))
	return sum, nil
}

// validPartName is a name that can stand in a file name of the merged WACZ.
func validPartName(s string) bool {
	if s == "" || len(s) > 100 || s[0] == '.' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// copyEntry copies f into zw as name without recompressing it, and returns
// its datapackage resource (the SHA-256 of its uncompressed bytes: for a
// STORED entry, of the bytes copied; otherwise read through f.Open too).
func copyEntry(zw *zip.Writer, f *zip.File, name string, modified time.Time) (resource, error) {
	raw, err := f.OpenRaw()
	if err != nil {
		return resource{}, err
	}
	fh := &zip.FileHeader{
		Name: name, Method: f.Method,
		CRC32: f.CRC32, CompressedSize64: f.CompressedSize64, UncompressedSize64: f.UncompressedSize64,
	}
	// CreateRaw writes the header as given: the MS-DOS time too.
	fh.SetModTime(modified) //nolint:staticcheck // the only setter of the MS-DOS fields
	fh.Modified = modified
	w, err := zw.CreateRaw(fh)
	if err != nil {
		return resource{}, err
	}
	var h hash.Hash = sha256.New()
	sum := crc32.NewIEEE()
	src := raw
	if f.Method == zip.Store {
		src = io.TeeReader(raw, io.MultiWriter(h, sum))
	}
	n, err := io.Copy(w, src)
	if err != nil {
		return resource{}, err
	}
	if uint64(n) != f.CompressedSize64 {
		return resource{}, fmt.Errorf("%w: %d bytes copied of %d", ErrMergeInput, n, f.CompressedSize64)
	}
	if f.Method == zip.Store && sum.Sum32() != f.CRC32 {
		// The copy is checked as a reader of the part would check it.
		return resource{}, fmt.Errorf("%w: %w", ErrMergeInput, zip.ErrChecksum)
	}
	if f.Method != zip.Store {
		rc, err := f.Open()
		if err != nil {
			return resource{}, fmt.Errorf("%w: %w", ErrMergeInput, err)
		}
		_, err = io.Copy(h, rc) // a wrong checksum is zip.ErrChecksum at the end
		rc.Close()
		if errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrAlgorithm) {
			return resource{}, fmt.Errorf("%w: %w", ErrMergeInput, err)
		}
		if err != nil {
			return resource{}, err
		}
	}
	return resource{Name: path.Base(name), Path: name, Hash: "sha256:" + hex.EncodeToString(h.Sum(nil)), Bytes: int64(f.UncompressedSize64)}, nil
}

// writeEntry deflates data into zw as name and returns its resource.
func writeEntry(zw *zip.Writer, name string, data []byte, modified time.Time) (resource, error) {
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: modified})
	if err == nil {
		_, err = w.Write(data)
	}
	if err != nil {
		return resource{}, fmt.Errorf("wacz: writing %s: %w", name, err)
	}
	return resource{Name: path.Base(name), Path: name, Hash: "sha256:" + hexSHA256(data), Bytes: int64(len(data))}, nil
}

// eachLine calls fn with each non-empty line of f (numbered from 1),
// refusing a line longer than max bytes.
func eachLine(f *zip.File, max int, fn func(n int, line []byte) error) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	// The first buffer fits the entry as its header sizes it (a part's
	// index and page list are a few kilobytes; a 64 KiB buffer each was a
	// fifth of a merge's time); the scanner grows it to max if need be.
	first := 64 << 10
	if f.UncompressedSize64 < uint64(first) {
		first = 4<<10 + int(f.UncompressedSize64)
	}
	sc.Buffer(make([]byte, 0, first), max)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("line %d is longer than %d bytes", n+1, max)
	}
	return sc.Err()
}

var newline = []byte{'\n'}
