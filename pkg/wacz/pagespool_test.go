package wacz

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPageSpoolSpills: a merged page list larger than the spool's memory
// moves to a temporary file and is written into the ZIP the same as one
// kept in memory: the same lines after the header, the resource's digest
// and size of them, the entry's checksum a reader verifies. Close removes
// the file.
func TestPageSpoolSpills(t *testing.T) {
	t.Parallel()
	var want bytes.Buffer
	want.WriteString(pagesHeader + "\n")
	var lines [][]byte
	for i := range 3000 {
		// Text that deflate cannot shrink much, so the spool passes 4 KiB.
		l := []byte(fmt.Sprintf(`{"id":"p%d","url":"https://example.test/%d","text":"%x"}`, i, i, sha256.Sum256([]byte{byte(i), byte(i >> 8)})))
		lines = append(lines, l)
		want.Write(l)
		want.WriteByte('\n')
	}
	for _, memory := range []int{4 << 10, pageSpoolMemory} {
		s, err := newPageSpool(memory)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if err := s.line(l); err != nil {
				t.Fatal(err)
			}
		}
		var out bytes.Buffer
		zw := zip.NewWriter(&out)
		r, err := s.writeTo(zw, time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		spilled := s.file != nil
		var name string
		if spilled {
			name = s.file.Name()
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if spilled != (memory < pageSpoolMemory) {
			t.Errorf("memory %d: spilled to a file %v", memory, spilled)
		}
		if spilled {
			if _, err := os.Stat(name); !os.IsNotExist(err) {
				t.Errorf("the temporary file %s is still there after Close: %v", name, err)
			}
		}
		zr, err := zip.NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := zr.File[0].Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc) // checks the entry's CRC-32
		rc.Close()
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("memory %d: the entry reads back %d bytes (%v), want the %d written", memory, len(got), err, want.Len())
		}
		sum := sha256.Sum256(want.Bytes())
		if r.Path != PagesPath || r.Bytes != int64(want.Len()) || r.Hash != "sha256:"+hex.EncodeToString(sum[:]) {
			t.Errorf("memory %d: resource %+v", memory, r)
		}
	}
}

// TestPageSpoolWithoutATemporaryFile: a spool that must move to a
// temporary file and cannot says so; the failure is not a part's
// (ErrMergeInput), which Merge reports as the archive's fault.
func TestPageSpoolWithoutATemporaryFile(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	s, err := newPageSpool(1 << 10)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; err == nil && i < 10000; i++ {
		err = s.line([]byte(fmt.Sprintf(`{"url":"https://example.test/%d","text":"%x"}`, i, sha256.Sum256([]byte{byte(i), byte(i >> 8)}))))
	}
	if err == nil {
		err = s.fw.Flush()
	}
	if err == nil || !strings.Contains(err.Error(), "a temporary file for the merged page list") || errors.Is(err, ErrMergeInput) {
		t.Errorf("error %v, want the temporary file's, not ErrMergeInput", err)
	}
}
