package cmdutil

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// Log formats of serve and dev demo (CAPTURE_LEDGER_LOG_FORMAT, --log-format).
const (
	LogText = "text"
	LogJSON = "json"
)

// newLogger is the logger serve and dev demo write to w: format "json" is
// one JSON object a line (for collectors), "text" one readable line
// ("15:04:05 INFO  message  key=value"), and "" picks text when w is a
// terminal, else json. Text is coloured only on a terminal and only when
// NO_COLOR is unset or empty (https://no-color.org).
func newLogger(w io.Writer, format, level string, getenv func(string) (string, bool)) *slog.Logger {
	opts := &slog.HandlerOptions{Level: logLevel(level)}
	tty := ui.IsTerminal(w)
	if format == "" {
		format = LogJSON
		if tty {
			format = LogText
		}
	}
	if format == LogJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	noColor, _ := getenv("NO_COLOR")
	return slog.New(newTextLogHandler(w, opts.Level.Level(), tty && noColor == ""))
}

// Logger is newLogger for the factory's stderr and the loaded settings.
func (f *Factory) Logger(format, level string) *slog.Logger {
	return newLogger(f.Streams.Err, format, level, f.LookupEnv)
}

// textLogHandler writes one line per record: the local time (seconds), the
// level padded to five, the message, then key=value pairs (values quoted
// when they hold spaces, quotes or control characters).
type textLogHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Level
	color  bool
	prefix string // attrs from WithAttrs, rendered
	group  string // the open group's key prefix ("g." or "g.h.")
}

func newTextLogHandler(w io.Writer, level slog.Level, color bool) *textLogHandler {
	return &textLogHandler{mu: &sync.Mutex{}, w: w, level: level, color: color}
}

// ANSI SGR sequences of the text format.
const (
	sgrReset  = "\x1b[0m"
	sgrDim    = "\x1b[2m"
	sgrBold   = "\x1b[1m"
	sgrRed    = "\x1b[31m"
	sgrGreen  = "\x1b[32m"
	sgrYellow = "\x1b[33m"
	sgrBlue   = "\x1b[34m"
)

func (h *textLogHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *textLogHandler) paint(b *bytes.Buffer, sgr, s string) {
	if h.color {
		b.WriteString(sgr)
		b.WriteString(s)
		b.WriteString(sgrReset)
		return
	}
	b.WriteString(s)
}

func (h *textLogHandler) Handle(_ context.Context, r slog.Record) error {
	var b bytes.Buffer
	if !r.Time.IsZero() {
		h.paint(&b, sgrDim, r.Time.Local().Format(time.TimeOnly))
		b.WriteByte(' ')
	}
	lv := r.Level.String()
	sgr := sgrBlue
	switch {
	case r.Level >= slog.LevelError:
		sgr = sgrBold + sgrRed
	case r.Level >= slog.LevelWarn:
		sgr = sgrBold + sgrYellow
	case r.Level >= slog.LevelInfo:
		sgr = sgrGreen
	}
	h.paint(&b, sgr, fmt.Sprintf("%-5s", lv))
	b.WriteByte(' ')
	b.WriteString(oneLineText(r.Message))
	attrs := h.prefix
	if r.NumAttrs() > 0 {
		var ab bytes.Buffer
		r.Attrs(func(a slog.Attr) bool {
			h.appendAttr(&ab, h.group, a)
			return true
		})
		attrs += ab.String()
	}
	if attrs != "" {
		b.WriteByte(' ')
		b.WriteString(attrs)
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b.Bytes())
	return err
}

// appendAttr renders " key=value" (a group's attrs as "group.key=value").
func (h *textLogHandler) appendAttr(b *bytes.Buffer, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			h.appendAttr(b, p, g)
		}
		return
	}
	b.WriteByte(' ')
	h.paint(b, sgrDim, prefix+a.Key+"=")
	var v string
	if a.Value.Kind() == slog.KindTime {
		v = a.Value.Time().Format(time.RFC3339)
	} else {
		v = a.Value.String()
	}
	b.WriteString(quoteIfNeeded(v))
}

func (h *textLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	c := *h
	var b bytes.Buffer
	for _, a := range attrs {
		h.appendAttr(&b, h.group, a)
	}
	c.prefix += b.String()
	return &c
}

func (h *textLogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group += name + "."
	return &c
}

// quoteIfNeeded leaves a value that reads unambiguously as one word, and
// quotes (Go syntax) one that is empty or holds spaces, quotes, '=' or
// anything unprintable.
func quoteIfNeeded(s string) string {
	if s == "" || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if unicode.IsSpace(r) || r == '"' || r == '=' || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// oneLineText keeps a message on its line: control characters (a newline
// in an error text, an escape sequence) are written escaped.
func oneLineText(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			q := strconv.Quote(s)
			return q[1 : len(q)-1]
		}
	}
	return s
}
