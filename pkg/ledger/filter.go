package ledger

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The filter fields of the archive list and search, as the API reads them
// (?crawl=&host=&from=&to=&q=) and a *FieldError names them.
const (
	FieldCrawl = "crawl"
	FieldHost  = "host"
	FieldFrom  = "from"
	FieldTo    = "to"
	FieldText  = "q"
)

// MaxFilterText is the most characters the list's text filter holds.
const MaxFilterText = 256

// ParseArchiveFilter reads the filter fields from values (each at most
// once; an empty value is the same as none): crawl a crawl id (UUID), host
// a host name (letters, digits, '-', '.', '_', or an IPv6 address in
// brackets; case is ignored), from and to an RFC 3339 date-time or a
// YYYY-MM-DD date (UTC) — to is inclusive: a date keeps its whole day —
// and, with text, q a text of at most MaxFilterText characters. Anything
// else is a *FieldError naming the field.
func ParseArchiveFilter(values map[string][]string, text bool) (ArchiveFilter, error) {
	var f ArchiveFilter
	get := func(field string) (string, error) {
		v := values[field]
		if len(v) > 1 {
			return "", &FieldError{Field: field, Reason: "must be a single value"}
		}
		if len(v) == 0 {
			return "", nil
		}
		if !utf8.ValidString(v[0]) {
			return "", &FieldError{Field: field, Reason: "must be valid UTF-8"}
		}
		if strings.ContainsFunc(v[0], unicode.IsControl) {
			return "", &FieldError{Field: field, Reason: "must not contain control characters"}
		}
		return v[0], nil
	}
	raw, err := get(FieldCrawl)
	if err != nil {
		return f, err
	}
	if raw != "" {
		if !IsUUID(raw) {
			return f, &FieldError{Field: FieldCrawl, Reason: `must match format "uuid"`}
		}
		f.CrawlID = strings.ToLower(raw)
	}
	if raw, err = get(FieldHost); err != nil {
		return f, err
	}
	if raw != "" {
		if f.Host, err = parseHost(raw); err != nil {
			return f, err
		}
	}
	if raw, err = get(FieldFrom); err != nil {
		return f, err
	}
	if raw != "" {
		t, _, err := parseWhen(FieldFrom, raw)
		if err != nil {
			return f, err
		}
		f.From = t
	}
	if raw, err = get(FieldTo); err != nil {
		return f, err
	}
	if raw != "" {
		t, day, err := parseWhen(FieldTo, raw)
		if err != nil {
			return f, err
		}
		// To is exclusive inside: a day keeps all of it, a date-time
		// itself (to the microsecond, the ledger's precision).
		if day {
			f.To = t.AddDate(0, 0, 1)
		} else {
			f.To = t.Truncate(time.Microsecond).Add(time.Microsecond)
		}
		if !f.From.IsZero() && !f.From.Before(f.To) {
			return f, &FieldError{Field: FieldTo, Reason: "must not be before from"}
		}
	}
	if raw, err = get(FieldText); err != nil {
		return f, err
	}
	if raw != "" {
		if !text {
			return f, &FieldError{Field: FieldText, Reason: "is not a filter here"}
		}
		if utf8.RuneCountInString(raw) > MaxFilterText {
			return f, &FieldError{Field: FieldText, Reason: "must NOT have more than 256 characters"}
		}
		f.Text = raw
	}
	return f, nil
}

func parseHost(raw string) (string, error) {
	h := strings.ToLower(raw)
	bad := &FieldError{Field: FieldHost, Reason: "must be a host name (letters, digits, '-', '.', '_') or an IPv6 address in brackets, without scheme, port or path"}
	if len(h) > 255 {
		return "", &FieldError{Field: FieldHost, Reason: "must NOT have more than 255 characters"}
	}
	if inner, ok := strings.CutPrefix(h, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok || inner == "" || strings.Trim(inner, "0123456789abcdef:.") != "" {
			return "", bad
		}
		return h, nil
	}
	if strings.Trim(h, "abcdefghijklmnopqrstuvwxyz0123456789-._") != "" {
		return "", bad
	}
	return h, nil
}

func parseWhen(field, raw string) (t time.Time, day bool, err error) {
	t, err = time.Parse(time.DateOnly, raw)
	day = err == nil
	if !day {
		t, err = time.Parse(time.RFC3339Nano, raw)
	}
	if err != nil {
		return time.Time{}, false, &FieldError{Field: field, Reason: `must be a date-time (RFC 3339) or a date (YYYY-MM-DD)`, Err: err}
	}
	if t = t.UTC(); t.Year() < 1 || t.Year() > 9998 {
		return time.Time{}, false, &FieldError{Field: field, Reason: "must be between the years 1 and 9998"}
	}
	return t, day, nil
}

// Key is the filter written out canonically ("" for none): a resume token
// is sealed with it, so it opens only for the same filters.
func (f ArchiveFilter) Key() string {
	if f.IsZero() {
		return ""
	}
	var b strings.Builder
	for _, kv := range [][2]string{
		{FieldCrawl, f.CrawlID}, {FieldHost, f.Host},
		{FieldFrom, when(f.From)}, {FieldTo, when(f.To)}, {FieldText, f.Text},
	} {
		b.WriteString(kv[0])
		b.WriteByte(0)
		b.WriteString(kv[1])
		b.WriteByte(0)
	}
	return b.String()
}

func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
