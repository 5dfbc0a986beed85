// Package ui prints what commands show people: tables, check marks and
// progress bars, styled with lipgloss only when the output is a terminal and
// NO_COLOR is unset or empty (https://no-color.org). It is the only package
// that imports lipgloss.
package ui

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"golang.org/x/term"
)

// IsTerminal reports whether w (or a reader: standard input) is a terminal.
// A character device is not enough: /dev/null is one, and a prompt on it
// reads end-of-file at once; the terminal's own ioctl has to answer.
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && term.IsTerminal(int(f.Fd()))
}

// NoColor reports whether NO_COLOR asks for output without colour: set to
// anything but the empty string.
func NoColor() bool { return os.Getenv("NO_COLOR") != "" }

// Printer writes human output to one stream, styled when that stream is a TTY.
type Printer struct {
	W     io.Writer
	Color bool
}

// New returns a Printer for w, styled when w is a terminal and NO_COLOR is
// not set.
func New(w io.Writer) *Printer { return &Printer{W: w, Color: IsTerminal(w) && !NoColor()} }

var (
	okStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("2")).Bold(true)
	failStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)
	headStyle = lipgloss.NewStyle().Bold(true)
	dimStyle  = lipgloss.NewStyle().Faint(true)
)

// Mark is ✓ or ✗, coloured on a terminal.
func (p *Printer) Mark(ok bool) string {
	switch {
	case ok && p.Color:
		return okStyle.Render("✓")
	case ok:
		return "✓"
	case p.Color:
		return failStyle.Render("✗")
	default:
		return "✗"
	}
}

// Dim renders s faint on a terminal.
func (p *Printer) Dim(s string) string {
	if p.Color {
		return dimStyle.Render(s)
	}
	return s
}

// Println writes one line.
func (p *Printer) Println(a ...any) { fmt.Fprintln(p.W, a...) }

// Printf writes formatted text.
func (p *Printer) Printf(format string, a ...any) { fmt.Fprintf(p.W, format, a...) }

// Table writes rows under headers in aligned columns. Cells may already carry
// styling; widths are measured on what is visible.
func (p *Printer) Table(headers []string, rows [][]string) {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = lipgloss.Width(h)
	}
	for _, r := range rows {
		for i := range headers {
			if i < len(r) {
				widths[i] = max(widths[i], lipgloss.Width(r[i]))
			}
		}
	}
	line := func(cells []string, head bool) {
		var b strings.Builder
		for i := range headers {
			cell := ""
			if i < len(cells) {
				cell = cells[i]
			}
			if head && p.Color {
				cell = headStyle.Render(cell)
			}
			b.WriteString(cell)
			if i < len(headers)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-lipgloss.Width(cell)+2))
			}
		}
		fmt.Fprintln(p.W, strings.TrimRight(b.String(), " "))
	}
	line(headers, true)
	for _, r := range rows {
		line(r, false)
	}
}

// Progress is a one-line progress bar on a terminal; elsewhere it stays
// silent so logs and pipes get only the final summary.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	label string
	total int
	done  int
	last  time.Time
}

// NewProgress starts a bar for total units of work labelled label.
func NewProgress(w io.Writer, label string, total int) *Progress {
	return &Progress{w: w, on: IsTerminal(w), label: label, total: total}
}

// Add records n more units done and redraws at most every 100 ms.
func (p *Progress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if !p.on || (time.Since(p.last) < 100*time.Millisecond && p.done < p.total) {
		return
	}
	p.last = time.Now()
	p.draw()
}

func (p *Progress) draw() {
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = min(width, p.done*width/p.total)
	}
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d", p.label, strings.Repeat("█", filled), strings.Repeat("░", width-filled), p.done, p.total)
}

// Count is the work done so far.
func (p *Progress) Count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// SetTotal changes the amount of work, once it is known.
func (p *Progress) SetTotal(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
}

// Done clears the bar.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// Time shows t in the local time zone with the zone's name, the way every
// table of the CLI shows a moment ("2026-12-02 17:45:19 UTC").
func Time(t time.Time) string { return t.Local().Format(time.DateTime + " MST") }
