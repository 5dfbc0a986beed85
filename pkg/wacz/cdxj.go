package wacz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// CDXJEntry is one line of a CDXJ index: where in which WARC the record for
// a URL at a time sits.
type CDXJEntry struct {
	Key       string // SURT of URL
	Timestamp string // 14 digits (17 when milliseconds are given)
	URL       string
	Mime      string
	Status    int // 0 when absent
	Digest    string
	Offset    int64 // of the record's gzip member in the WARC file
	Length    int64 // of that gzip member
	Filename  string
}

// cdxjBlock is the JSON part of a line as Write emits it: every value a
// string, in the key order BrowserHive and pywb use.
type cdxjBlock struct {
	URL      string `json:"url"`
	Mime     string `json:"mime"`
	Status   string `json:"status"`
	Digest   string `json:"digest"`
	Length   string `json:"length"`
	Offset   string `json:"offset"`
	Filename string `json:"filename"`
}

// appendLine appends e as one CDXJ line with its trailing newline.
func (e CDXJEntry) appendLine(dst []byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// A struct of strings always encodes.
	_ = enc.Encode(cdxjBlock{
		URL:      e.URL,
		Mime:     e.Mime,
		Status:   strconv.Itoa(e.Status),
		Digest:   e.Digest,
		Length:   strconv.FormatInt(e.Length, 10),
		Offset:   strconv.FormatInt(e.Offset, 10),
		Filename: e.Filename,
	})
	dst = append(dst, e.Key...)
	dst = append(dst, ' ')
	dst = append(dst, e.Timestamp...)
	dst = append(dst, ' ')
	return append(dst, buf.Bytes()...) // Encode ends it with "\n"
}

// sortKey is what CDXJ lines are ordered by: "<key> <timestamp>" compared as
// bytes, which is what wabac and the WACZ checkers expect.
func (e CDXJEntry) sortKey() string { return e.Key + " " + e.Timestamp }

// ParseCDXJLine reads one line of a CDXJ index: `<key> <timestamp> <json>`.
// The JSON must be an object with a string url and filename and a
// non-negative offset and length, given as integers or numeric strings (pywb
// and BrowserHive write strings, warcio.js numbers); status may be either
// too. mime and digest are optional strings. The error names the field at
// fault.
func ParseCDXJLine(line string) (CDXJEntry, error) {
	line = strings.TrimRight(line, "\r\n")
	key, rest, ok := strings.Cut(line, " ")
	if !ok || key == "" {
		return CDXJEntry{}, fmt.Errorf("cdxj: line has no key, timestamp and JSON block")
	}
	ts, block, ok := strings.Cut(rest, " ")
	if !ok {
		return CDXJEntry{}, fmt.Errorf("cdxj: line has no JSON block after the timestamp")
	}
	if (len(ts) != 14 && len(ts) != 17) || strings.Trim(ts, "0123456789") != "" {
		return CDXJEntry{}, fmt.Errorf("cdxj: timestamp %q is not 14 or 17 digits", ts)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(block), &obj); err != nil || obj == nil {
		return CDXJEntry{}, fmt.Errorf("cdxj: block is not a JSON object")
	}
	e := CDXJEntry{Key: key, Timestamp: ts}
	var err error
	if e.URL, err = cdxjString(obj, "url", true); err != nil {
		return CDXJEntry{}, err
	}
	if e.Filename, err = cdxjString(obj, "filename", true); err != nil {
		return CDXJEntry{}, err
	}
	if e.Mime, err = cdxjString(obj, "mime", false); err != nil {
		return CDXJEntry{}, err
	}
	if e.Digest, err = cdxjString(obj, "digest", false); err != nil {
		return CDXJEntry{}, err
	}
	if e.Offset, err = cdxjInt(obj, "offset", true); err != nil {
		return CDXJEntry{}, err
	}
	if e.Length, err = cdxjInt(obj, "length", true); err != nil {
		return CDXJEntry{}, err
	}
	status, err := cdxjInt(obj, "status", false)
	if err != nil {
		return CDXJEntry{}, err
	}
	if status > 999 {
		return CDXJEntry{}, fmt.Errorf("cdxj: \"status\" %d is not an HTTP status", status)
	}
	e.Status = int(status)
	return e, nil
}

func cdxjString(obj map[string]json.RawMessage, name string, required bool) (string, error) {
	raw, ok := obj[name]
	if !ok {
		if required {
			return "", fmt.Errorf("cdxj: %q is missing", name)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("cdxj: %q is not a string", name)
	}
	if required && s == "" {
		return "", fmt.Errorf("cdxj: %q is empty", name)
	}
	return s, nil
}

// cdxjInt reads a non-negative integer given as a JSON number or a string of
// decimal digits.
func cdxjInt(obj map[string]json.RawMessage, name string, required bool) (int64, error) {
	raw, ok := obj[name]
	if !ok {
		if required {
			return 0, fmt.Errorf("cdxj: %q is missing", name)
		}
		return 0, nil
	}
	text := string(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = s
	}
	if text == "" || strings.Trim(text, "0123456789") != "" {
		return 0, fmt.Errorf("cdxj: %q is not a non-negative integer", name)
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cdxj: %q is out of range", name)
	}
	return n, nil
}
