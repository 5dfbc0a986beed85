package wacz

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"errors"
	"fmt"
	"io"
)

// The reasons a WACZ's pages cannot be read at all. Search records them as
// the archive's failure reason, so each is a distinct sentinel; errors.Is
// finds them through the wrapping.
var (
	// ErrNotZip: the file is not a ZIP (or is cut short before its
	// central directory).
	ErrNotZip = errors.New("wacz: not a ZIP file")
	// ErrNoPages: the ZIP has no pages/pages.jsonl entry.
	ErrNoPages = errors.New("wacz: no " + PagesPath + " in the archive")
	// ErrPagesCorrupt: the entry exists but its bytes cannot be inflated
	// or fail their CRC.
	ErrPagesCorrupt = errors.New("wacz: " + PagesPath + " is corrupt")
)

// MaxPageLineBytes bounds one line of pages.jsonl. Write keeps a page's text
// to a million characters and its title to MaxTitleRunes (at most six bytes
// each when JSON-escaped), so a longer line is malformed; the bound keeps a
// hostile archive from making the reader hold an unbounded line in memory.
const MaxPageLineBytes = 16 << 20

// PagesStats counts what a PagesReader has read so far.
type PagesStats struct {
	Pages     int // page lines returned
	Headers   int // {"format":…} header lines skipped
	Malformed int // lines skipped: not JSON objects, wrongly typed members, no url, or too long
}

// PagesReader yields the page lines of a WACZ's pages/pages.jsonl one at a
// time, skipping (and counting) the header and malformed lines.
type PagesReader struct {
	rc    io.ReadCloser
	br    *bufio.Reader
	stats PagesStats
	err   error // sticky: io.EOF or the read error
}

// OpenPages opens the pages of the WACZ in r (size bytes long). It reads
// only the ZIP's central directory and, as Next is called, the
// pages/pages.jsonl entry, so over a ranged reader (S3 GetObject with
// Range) it fetches a small fraction of a large archive.
//
// Errors: ErrNotZip, ErrNoPages, ErrPagesCorrupt, or the reader's own error
// wrapped.
func OpenPages(r io.ReaderAt, size int64) (*PagesReader, error) {
	zr, err := openZip(r, size)
	if err != nil {
		return nil, err
	}
	f := findFile(zr, PagesPath)
	if f == nil {
		return nil, ErrNoPages
	}
	rc, err := f.Open()
	if err != nil {
		return nil, classifyPagesErr(err)
	}
	return &PagesReader{rc: rc, br: bufio.NewReaderSize(rc, 64<<10)}, nil
}

// openZip reads the central directory, telling a broken file from a failing
// reader.
func openZip(r io.ReaderAt, size int64) (*zip.Reader, error) {
	if size < 0 {
		return nil, fmt.Errorf("%w: negative size %d", ErrNotZip, size)
	}
	zr, err := zip.NewReader(boundedReaderAt{r: r, size: size}, size)
	var src *sourceError
	switch {
	case err == nil:
		return zr, nil
	case errors.As(err, &src):
		return nil, fmt.Errorf("wacz: reading the ZIP directory: %w", src.err)
	case errors.Is(err, zip.ErrInsecurePath) && zr != nil:
		// Only reported under GODEBUG=zipinsecurepath=0; the names are
		// compared, never used as file paths.
		return zr, nil
	case errors.Is(err, zip.ErrFormat), errors.Is(err, zip.ErrAlgorithm), errors.Is(err, errOutsideFile),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("%w: %v", ErrNotZip, err)
	default:
		return nil, fmt.Errorf("wacz: reading the ZIP directory: %w", err)
	}
}

// errOutsideFile is a read the ZIP's own offsets asked for before the start
// or past the end of the file: a broken archive, not a failing reader.
var errOutsideFile = errors.New("offset outside the file")

// boundedReaderAt keeps reads inside [0, size), so a corrupt offset in the
// ZIP is told apart from an I/O error of the underlying reader.
type boundedReaderAt struct {
	r    io.ReaderAt
	size int64
}

func (b boundedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > b.size {
		return 0, fmt.Errorf("%w: %d (size %d)", errOutsideFile, off, b.size)
	}
	short := false
	if rest := b.size - off; int64(len(p)) > rest {
		p, short = p[:rest], true
	}
	n, err := b.r.ReadAt(p, off)
	if err != nil && !(errors.Is(err, io.EOF) && n == len(p)) {
		// Inside the file every byte must be there: a failure here is the
		// reader's (a dropped connection, an object shorter than size),
		// not a broken archive, and must not be reported as one.
		return n, &sourceError{err}
	}
	if short {
		return n, io.EOF
	}
	return n, nil
}

// sourceError is an error of the reader OpenPages or Check was given.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// findFile returns the first entry named name, or nil.
func findFile(zr *zip.Reader, name string) *zip.File {
	for _, f := range zr.File {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func classifyPagesErr(err error) error {
	var corrupt flate.CorruptInputError
	var src *sourceError
	if errors.As(err, &src) {
		return fmt.Errorf("wacz: reading %s: %w", PagesPath, src.err)
	}
	if errors.Is(err, zip.ErrChecksum) || errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrAlgorithm) ||
		errors.Is(err, errOutsideFile) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &corrupt) {
		return fmt.Errorf("%w: %v", ErrPagesCorrupt, err)
	}
	return fmt.Errorf("wacz: reading %s: %w", PagesPath, err)
}

// Next returns the next page line, io.EOF after the last one, or the error
// that stopped reading (ErrPagesCorrupt or the reader's). Header and
// malformed lines are skipped and counted in Stats.
func (p *PagesReader) Next() (PageEntry, error) {
	for p.err == nil {
		line, tooLong, err := p.readLine()
		if err != nil && !errors.Is(err, io.EOF) {
			p.err = classifyPagesErr(err)
			break
		}
		if err != nil {
			p.err = io.EOF // after this last, unterminated line
		}
		if tooLong {
			p.stats.Malformed++
			continue
		}
		page, kind := parsePageLine(line)
		switch kind {
		case linePage:
			p.stats.Pages++
			return page, nil
		case lineHeader:
			p.stats.Headers++
		case lineMalformed:
			p.stats.Malformed++
		}
	}
	return PageEntry{}, p.err
}

// readLine reads up to and including the next newline. A line longer than
// MaxPageLineBytes is read to its end but not kept (tooLong).
func (p *PagesReader) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := p.br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxPageLineBytes {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, tooLong, err
		}
	}
}

// Stats counts the lines read so far.
func (p *PagesReader) Stats() PagesStats { return p.stats }

// Close releases the entry reader.
func (p *PagesReader) Close() error { return p.rc.Close() }

// ReadPages reads every page of the WACZ in r: OpenPages, then Next until
// the end.
func ReadPages(r io.ReaderAt, size int64) ([]PageEntry, PagesStats, error) {
	pr, err := OpenPages(r, size)
	if err != nil {
		return nil, PagesStats{}, err
	}
	defer pr.Close()
	var pages []PageEntry
	for {
		page, err := pr.Next()
		if errors.Is(err, io.EOF) {
			return pages, pr.Stats(), nil
		}
		if err != nil {
			return pages, pr.Stats(), err
		}
		pages = append(pages, page)
	}
}
