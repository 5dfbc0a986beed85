package wacz

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path"
	"time"
)

// pageSpoolMemory is how many deflated bytes of a merged page list a
// pageSpool keeps in memory before it moves them to a temporary file (a
// page's text deflates to a few kilobytes: a crawl of a few thousand pages
// stays in memory).
const pageSpoolMemory = 8 << 20

// pageSpool deflates a merged WACZ's page list as its lines come, part by
// part, and writes it into the ZIP afterwards as one entry, copied raw:
// the page lines are read once, with their parts' WARCs and indexes, and
// never held uncompressed. Past memory (pageSpoolMemory in a merge) the
// deflated bytes go to a temporary file, removed by Close.
type pageSpool struct {
	// memory is how many deflated bytes are kept in memory at most.
	memory int
	fw     *flate.Writer
	sha    hash.Hash
	crc    hash.Hash32
	n      int64 // uncompressed bytes
	mem    bytes.Buffer
	file   *os.File
	out    io.Writer // where fw writes: the spool itself
}

func newPageSpool(memory int) (*pageSpool, error) {
	s := &pageSpool{memory: memory, sha: sha256.New(), crc: crc32.NewIEEE()}
	s.out = spoolWriter{s}
	// The level archive/zip deflates its entries at.
	fw, err := flate.NewWriter(s.out, 5)
	if err != nil {
		return nil, err
	}
	s.fw = fw
	if err := s.write([]byte(pagesHeader + "\n")); err != nil {
		return nil, err
	}
	return s, nil
}

// line adds one page line (without its newline).
func (s *pageSpool) line(l []byte) error {
	if err := s.write(l); err != nil {
		return err
	}
	return s.write(newline)
}

func (s *pageSpool) write(p []byte) error {
	s.sha.Write(p)
	s.crc.Write(p)
	s.n += int64(len(p))
	_, err := s.fw.Write(p)
	return err
}

// spoolWriter takes the deflated bytes: into memory, then, past its
// spool's memory, into a temporary file.
type spoolWriter struct{ s *pageSpool }

func (w spoolWriter) Write(p []byte) (int, error) {
	s := w.s
	if s.file == nil && s.mem.Len()+len(p) > s.memory {
		f, err := os.CreateTemp("", "ledgerctl-merge-pages-*")
		if err != nil {
			return 0, fmt.Errorf("wacz: a temporary file for the merged page list: %w", err)
		}
		s.file = f
		if _, err := f.Write(s.mem.Bytes()); err != nil {
			return 0, fmt.Errorf("wacz: spooling the merged page list: %w", err)
		}
		s.mem = bytes.Buffer{}
	}
	if s.file != nil {
		n, err := s.file.Write(p)
		if err != nil {
			err = fmt.Errorf("wacz: spooling the merged page list: %w", err)
		}
		return n, err
	}
	return s.mem.Write(p)
}

// writeTo ends the page list and writes it into zw as PagesPath, deflated
// as it was spooled, and returns its datapackage resource.
func (s *pageSpool) writeTo(zw *zip.Writer, modified time.Time) (resource, error) {
	if err := s.fw.Close(); err != nil {
		return resource{}, err
	}
	var src io.Reader = &s.mem
	size := int64(s.mem.Len())
	if s.file != nil {
		end, err := s.file.Seek(0, io.SeekCurrent)
		if err == nil {
			_, err = s.file.Seek(0, io.SeekStart)
		}
		if err != nil {
			return resource{}, fmt.Errorf("wacz: reading the spooled page list: %w", err)
		}
		src, size = s.file, end
	}
	fh := &zip.FileHeader{
		Name: PagesPath, Method: zip.Deflate,
		CRC32: s.crc.Sum32(), CompressedSize64: uint64(size), UncompressedSize64: uint64(s.n),
	}
	// CreateRaw writes the header as given: the MS-DOS time too.
	fh.SetModTime(modified) //nolint:staticcheck // the only setter of the MS-DOS fields
	fh.Modified = modified
	w, err := zw.CreateRaw(fh)
	if err == nil {
		var n int64
		n, err = io.Copy(w, src)
		if err == nil && n != size {
			err = fmt.Errorf("%d bytes of %d", n, size)
		}
	}
	if err != nil {
		return resource{}, fmt.Errorf("wacz: writing %s: %w", PagesPath, err)
	}
	return resource{Name: path.Base(PagesPath), Path: PagesPath, Hash: "sha256:" + hex.EncodeToString(s.sha.Sum(nil)), Bytes: s.n}, nil
}

// Close removes the temporary file, if there was one.
func (s *pageSpool) Close() error {
	if s.file == nil {
		return nil
	}
	name := s.file.Name()
	return errors.Join(s.file.Close(), os.Remove(name))
}
