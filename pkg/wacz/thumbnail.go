package wacz

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"mime"
	"strconv"
	"strings"
)

// The URI prefixes of a page's pictures inside a WACZ (Browsertrix's and
// ArchiveWeb.page's names): the viewport's screenshot and its thumbnail.
const (
	ViewPrefix      = "urn:view:"
	ThumbnailPrefix = "urn:thumbnail:"
)

// Bounds on what ReadThumbnail accepts from an archive, which may be
// hostile: the record's size, the picture's sides and pixels, and how much
// of the index it scans for the record.
const (
	MaxImageBytes  = 4 << 20
	MaxImageSide   = 4096
	MaxImagePixels = 4096 * 2160
	// MaxIndexScanBytes is how much of the CDXJ indexes ReadThumbnail reads
	// looking for the picture before it gives up.
	MaxIndexScanBytes = 32 << 20
	maxIndexLineBytes = 64 << 10
	maxWARCHeadBytes  = 64 << 10
)

// Errors of ReadThumbnail besides the reader's own and ErrNotZip.
var (
	// ErrNoThumbnail: the archive names no thumbnail or screenshot in a
	// plain CDXJ index that ReadThumbnail can read in place.
	ErrNoThumbnail = errors.New("wacz: no thumbnail in the archive")
	// ErrBadThumbnail: the index names one, but the record is missing,
	// malformed, too large, or not a valid PNG or JPEG image.
	ErrBadThumbnail = errors.New("wacz: the archive's thumbnail is unreadable")
)

// Image is a picture read out of a WACZ.
type Image struct {
	URI           string // urn:thumbnail:<page> or urn:view:<page>
	PageURL       string // the page it shows
	Mime          string // image/png or image/jpeg, from the bytes themselves
	Width, Height int
	Data          []byte
}

// CheckImage says whether data is a whole, decodable PNG or JPEG within
// MaxImageBytes, MaxImageSide and MaxImagePixels, and returns its media
// type. When want is not "", the bytes must be of that type. The type is
// decided by the bytes (their signature), never by a label.
func CheckImage(data []byte, want string) (Image, error) {
	var typ string
	var decodeConfig func(io.Reader) (image.Config, error)
	var decode func(io.Reader) (image.Image, error)
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		typ, decodeConfig, decode = "image/png", png.DecodeConfig, png.Decode
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		typ, decodeConfig, decode = "image/jpeg", jpeg.DecodeConfig, jpeg.Decode
	default:
		return Image{}, errors.New("not a PNG or JPEG image")
	}
	if want != "" && want != typ {
		return Image{}, fmt.Errorf("the bytes are %s, not %s", typ, want)
	}
	if len(data) > MaxImageBytes {
		return Image{}, fmt.Errorf("%d bytes, more than %d", len(data), MaxImageBytes)
	}
	cfg, err := decodeConfig(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("%s header: %v", typ, err)
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxImageSide || cfg.Height > MaxImageSide || cfg.Width*cfg.Height > MaxImagePixels {
		return Image{}, fmt.Errorf("%d×%d pixels is outside 1×1 to %d×%d (%d pixels)", cfg.Width, cfg.Height, MaxImageSide, MaxImageSide, MaxImagePixels)
	}
	// Decoding the whole picture proves the bytes are an image and not
	// only a header in front of something else.
	if _, err := decode(bytes.NewReader(data)); err != nil {
		return Image{}, fmt.Errorf("%s data: %v", typ, err)
	}
	return Image{Mime: typ, Width: cfg.Width, Height: cfg.Height, Data: data}, nil
}

// ReadThumbnail reads the picture of the WACZ in r (size bytes long) with
// ranged reads only: the ZIP's central directory, the CDXJ index entries
// (until the record is found, at most MaxIndexScanBytes), the local header
// of the WARC entry, and the one record. It prefers a `urn:thumbnail:`
// record and falls back to the `urn:view:` screenshot; the first in index
// order of each kind counts. The WARC must be stored in place (as WACZ
// requires); the picture must pass CheckImage.
//
// Errors: ErrNotZip, ErrNoThumbnail, ErrBadThumbnail (each wrapped with the
// detail), or the reader's own error wrapped.
func ReadThumbnail(r io.ReaderAt, size int64) (Image, error) {
	zr, err := openZip(r, size)
	if err != nil {
		return Image{}, err
	}
	thumb, view, err := findPictures(zr)
	if err != nil {
		return Image{}, err
	}
	var firstErr error
	for _, e := range []*CDXJEntry{thumb, view} {
		if e == nil {
			continue
		}
		img, err := readPicture(zr, boundedReaderAt{r: r, size: size}, *e)
		if err == nil {
			return img, nil
		}
		var src *sourceError
		if errors.As(err, &src) {
			return Image{}, fmt.Errorf("wacz: reading %s: %w", e.URL, src.err)
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return Image{}, firstErr
	}
	return Image{}, ErrNoThumbnail
}

// findPictures scans the plain CDXJ indexes (indexes/*.cdxj) for the first
// urn:thumbnail: and urn:view: entries.
func findPictures(zr *zip.Reader) (thumb, view *CDXJEntry, err error) {
	budget := int64(MaxIndexScanBytes)
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, "indexes/") || !strings.HasSuffix(f.Name, ".cdxj") {
			continue
		}
		if budget <= 0 {
			break
		}
		rc, err := f.Open()
		if err != nil {
			var src *sourceError
			if errors.As(err, &src) {
				return nil, nil, fmt.Errorf("wacz: reading %s: %w", f.Name, src.err)
			}
			continue // a broken index: try the next
		}
		lr := &io.LimitedReader{R: rc, N: budget}
		t, v, err := scanIndex(lr)
		budget = lr.N
		rc.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("wacz: reading %s: %w", f.Name, err)
		}
		if thumb == nil {
			thumb = t
		}
		if view == nil {
			view = v
		}
		if thumb != nil {
			break
		}
	}
	if thumb == nil && view == nil {
		return nil, nil, ErrNoThumbnail
	}
	return thumb, view, nil
}

// scanIndex reads CDXJ lines until it has a thumbnail entry or the input
// ends; malformed and over-long lines are skipped. Only errors of the
// source are returned: a corrupt entry simply ends the scan.
func scanIndex(rd io.Reader) (thumb, view *CDXJEntry, err error) {
	br := bufio.NewReaderSize(rd, 32<<10)
	for {
		line, tooLong, rerr := readBoundedLine(br, maxIndexLineBytes)
		if !tooLong && len(line) > 0 {
			// The key of a urn: URL is the URL itself (SURT), so the
			// line's start says what it is before it is parsed.
			isThumb := bytes.HasPrefix(line, []byte(ThumbnailPrefix))
			isView := bytes.HasPrefix(line, []byte(ViewPrefix))
			if (isThumb && thumb == nil) || (isView && view == nil) {
				if e, perr := ParseCDXJLine(string(line)); perr == nil {
					switch {
					case isThumb && strings.HasPrefix(e.URL, ThumbnailPrefix):
						thumb = &e
					case isView && strings.HasPrefix(e.URL, ViewPrefix):
						view = &e
					}
				}
			}
		}
		if thumb != nil {
			return thumb, view, nil
		}
		if rerr != nil {
			var src *sourceError
			if errors.As(rerr, &src) {
				return nil, nil, src.err
			}
			return thumb, view, nil // EOF, the scan budget, or a corrupt entry
		}
	}
}

// readBoundedLine reads one line; a line longer than max is consumed but
// not returned (tooLong).
func readBoundedLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimRight(line, "\r\n"), tooLong, err
		}
	}
}

// readPicture reads the record e points at: e.Length bytes at e.Offset of
// the stored WARC entry, one gzip member (or a plain record in a .warc). r
// is the archive behind a boundedReaderAt, so the reader's failures are
// *sourceError and everything else is the archive's fault.
func readPicture(zr *zip.Reader, r io.ReaderAt, e CDXJEntry) (Image, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: "+format, append([]any{ErrBadThumbnail, e.URL}, args...)...)
	}
	name := e.Filename
	if name == "" || strings.Contains(name, "/") || strings.Contains(name, "\\") || name == "." || name == ".." {
		return Image{}, bad("index filename %q is not a file of archive/", e.Filename)
	}
	f := findFile(zr, "archive/"+name)
	if f == nil {
		return Image{}, bad("archive/%s is not in the archive", name)
	}
	if f.Method != zip.Store {
		return Image{}, bad("archive/%s is compressed, so it cannot be read in place", name)
	}
	if e.Length <= 0 || e.Length > MaxImageBytes+maxWARCHeadBytes {
		return Image{}, bad("record length %d is outside 1 to %d", e.Length, MaxImageBytes+maxWARCHeadBytes)
	}
	if e.Offset < 0 || uint64(e.Offset)+uint64(e.Length) > f.CompressedSize64 {
		return Image{}, bad("record at %d+%d lies outside archive/%s (%d bytes)", e.Offset, e.Length, name, f.CompressedSize64)
	}
	start, err := f.DataOffset()
	if err != nil {
		var src *sourceError
		if errors.As(err, &src) {
			return Image{}, err
		}
		return Image{}, bad("archive/%s: %v", name, err)
	}
	raw := make([]byte, e.Length)
	if n, err := r.ReadAt(raw, start+e.Offset); err != nil && !(errors.Is(err, io.EOF) && n == len(raw)) {
		var src *sourceError
		if errors.As(err, &src) {
			return Image{}, err
		}
		return Image{}, bad("record at %d+%d: %v", e.Offset, e.Length, err)
	}
	var rec io.Reader = bytes.NewReader(raw)
	if strings.HasSuffix(name, ".gz") {
		gz, err := gzip.NewReader(rec)
		if err != nil {
			return Image{}, bad("record is not gzip: %v", err)
		}
		gz.Multistream(false)
		rec = gz
	}
	pic, err := parsePictureRecord(bufio.NewReaderSize(io.LimitReader(rec, MaxImageBytes+maxWARCHeadBytes+4), 16<<10), e.URL)
	if err != nil {
		return Image{}, bad("%v", err)
	}
	img, err := CheckImage(pic.data, "")
	if err != nil {
		return Image{}, bad("%v", err)
	}
	if pic.mime != img.Mime {
		return Image{}, bad("the record says %q but holds %s", pic.mime, img.Mime)
	}
	img.URI = e.URL
	img.PageURL = strings.TrimPrefix(strings.TrimPrefix(e.URL, ThumbnailPrefix), ViewPrefix)
	return img, nil
}

type pictureRecord struct {
	mime string
	data []byte
}

// parsePictureRecord reads one WARC resource (or response-less) record
// whose target is uri and whose block is the picture.
func parsePictureRecord(br *bufio.Reader, uri string) (pictureRecord, error) {
	version, _, err := readBoundedLine(br, 64)
	if err != nil || (string(version) != "WARC/1.1" && string(version) != "WARC/1.0") {
		return pictureRecord{}, errors.New("not a WARC/1.0 or WARC/1.1 record")
	}
	fields := map[string]string{}
	total := 0
	for {
		line, tooLong, err := readBoundedLine(br, maxWARCHeadBytes)
		total += len(line)
		if tooLong || total > maxWARCHeadBytes {
			return pictureRecord{}, errors.New("the record's header is too long")
		}
		if err != nil {
			return pictureRecord{}, errors.New("the record's header is cut short")
		}
		if len(line) == 0 {
			break
		}
		name, value, ok := strings.Cut(string(line), ":")
		if !ok {
			return pictureRecord{}, fmt.Errorf("header line %q has no colon", truncate(string(line), 60))
		}
		key := strings.ToLower(strings.TrimSpace(name))
		if _, dup := fields[key]; dup {
			return pictureRecord{}, fmt.Errorf("header %q is repeated", truncate(name, 60))
		}
		fields[key] = strings.TrimSpace(value)
	}
	if t := fields["warc-type"]; t != "resource" {
		return pictureRecord{}, fmt.Errorf("WARC-Type is %q, not resource", truncate(t, 60))
	}
	if got := strings.Trim(fields["warc-target-uri"], "<>"); got != uri {
		return pictureRecord{}, errors.New("WARC-Target-URI is not the URL the index names")
	}
	mt, _, err := mime.ParseMediaType(fields["content-type"])
	if err != nil || (mt != "image/png" && mt != "image/jpeg") {
		return pictureRecord{}, fmt.Errorf("Content-Type %q is not image/png or image/jpeg", truncate(fields["content-type"], 60))
	}
	n, err := strconv.ParseInt(fields["content-length"], 10, 64)
	if err != nil || n < 1 || n > MaxImageBytes {
		return pictureRecord{}, fmt.Errorf("Content-Length %q is not 1 to %d", truncate(fields["content-length"], 30), MaxImageBytes)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(br, data); err != nil {
		return pictureRecord{}, errors.New("the record's block is cut short")
	}
	return pictureRecord{mime: mt, data: data}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
