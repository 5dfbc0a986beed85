package ui

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// openPTY is a pseudo-terminal's terminal side (testenv.OpenPTY).
func openPTY(t *testing.T) *os.File { return testenv.OpenPTY(t) }

// TestIsTerminal: /dev/null is a character device but no terminal (a prompt
// on it would read end-of-file at once); a pseudo-terminal is one.
func TestIsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if IsTerminal(null) {
		t.Errorf("IsTerminal(%s) = true, want false", os.DevNull)
	}
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("IsTerminal(a buffer) = true")
	}
	if tty := openPTY(t); !IsTerminal(tty) {
		t.Errorf("IsTerminal(%s) = false, want true", tty.Name())
	}
}

// TestNoColor: on a terminal the printer styles its output unless NO_COLOR
// is set to something; an empty NO_COLOR counts as unset.
func TestNoColor(t *testing.T) {
	tty := openPTY(t)
	for _, c := range []struct {
		value string
		color bool
	}{{"", true}, {"1", false}, {"yes", false}} {
		t.Setenv("NO_COLOR", c.value)
		if got := New(tty).Color; got != c.color {
			t.Errorf("NO_COLOR=%q: Color = %v, want %v", c.value, got, c.color)
		}
	}
	var buf bytes.Buffer
	p := &Printer{W: &buf}
	p.Table([]string{"a", "b"}, [][]string{{p.Mark(true), p.Dim("x")}})
	if strings.Contains(buf.String(), "\x1b[") {
		t.Errorf("an uncoloured printer wrote escape codes: %q", buf.String())
	}
}
