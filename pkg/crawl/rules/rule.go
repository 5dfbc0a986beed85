package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Action is what a rule does with the URLs it matches.
type Action string

const (
	// Follow captures the page and reads its links.
	Follow Action = "follow"
	// Capture captures the page only; its links are not read.
	Capture Action = "capture"
	// Skip drops the URL; it is not captured.
	Skip Action = "skip"
)

// Valid reports whether a is follow, capture or skip.
func (a Action) Valid() bool { return a == Follow || a == Capture || a == Skip }

// restrictiveness orders actions skip < capture < follow.
func (a Action) restrictiveness() int {
	switch a {
	case Follow:
		return 2
	case Capture:
		return 1
	default:
		return 0
	}
}

// Kind is the kind of a rule pattern.
type Kind string

const (
	// KindScope is one of the scope words, compared with the seeds.
	KindScope Kind = "scope"
	// KindDomain is a lowercase hostname matching itself and its subdomains.
	KindDomain Kind = "domain"
	// KindURL is a normalised http(s) URL matched as a string prefix.
	KindURL Kind = "url"
)

// The scope words.
const (
	SameOrigin = "same-origin" // scheme, host and port equal to a seed's
	SameHost   = "same-host"   // host including port equal to a seed's
	SameSite   = "same-site"   // registrable domain equal to a seed's
	Any        = "any"         // everything
)

// Shape limits of a rule list (a violation is a schema 400).
const (
	MinRules      = 1
	MaxRules      = 32
	MaxPatternLen = 2048 // characters (code points), as JSON Schema counts
)

// Rule is one entry of a crawl's ordered rule list. Its JSON form is an
// object with exactly one key, the action: {"follow":"same-site"}.
type Rule struct {
	Action  Action
	Pattern string
}

// Default is the rule list used when a crawl names none:
// [{"follow":"same-origin"}].
func Default() []Rule { return []Rule{{Action: Follow, Pattern: SameOrigin}} }

// String returns the query form, "action:pattern".
func (r Rule) String() string { return string(r.Action) + ":" + r.Pattern }

// Kind returns the kind of the rule's pattern, or "" when the pattern is
// not valid.
func (r Rule) Kind() Kind {
	k, _, err := NormalizePattern(r.Pattern)
	if err != nil {
		return ""
	}
	return k
}

// Normalized returns the rule with its pattern in normal form (URL prefixes
// normalised; scope words and hostnames are already normal or invalid).
func (r Rule) Normalized() (Rule, error) {
	_, p, err := NormalizePattern(r.Pattern)
	if err != nil {
		return r, err
	}
	return Rule{Action: r.Action, Pattern: p}, nil
}

// MarshalJSON writes {"<action>":"<pattern>"}.
func (r Rule) MarshalJSON() ([]byte, error) {
	if !r.Action.Valid() {
		return nil, fmt.Errorf("rules: cannot marshal a rule with action %q", r.Action)
	}
	p, err := json.Marshal(r.Pattern)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"`)
	b.WriteString(string(r.Action))
	b.WriteString(`":`)
	b.Write(p)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads one rule object with the same checks as ParseJSON
// (exactly one key, follow|capture|skip, a string of at most 2048
// characters). The pattern itself is not validated.
func (r *Rule) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	rule, err := decodeRule(dec, -1)
	if err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &SchemaError{Index: -1, Reason: "unexpected data after the rule object"}
	}
	*r = rule
	return nil
}

// SchemaError is a rule list of the wrong shape: the 400 a JSON Schema
// would give. Index is the 0-based position in the array (rules[Index]), or
// -1 when the problem is the list as a whole; Field names the offending key
// when there is one.
type SchemaError struct {
	Index  int
	Field  string
	Reason string
}

func (e *SchemaError) Error() string {
	var where string
	switch {
	case e.Index < 0 && e.Field == "":
		where = "rules"
	case e.Index < 0:
		where = "rules: " + e.Field
	case e.Field == "":
		where = fmt.Sprintf("rules[%d]", e.Index)
	default:
		where = fmt.Sprintf("rules[%d].%s", e.Index, e.Field)
	}
	return where + ": " + e.Reason
}

// ParseJSON reads a rule list in its JSON form: an array of 1 to 32
// objects, each with exactly one key (follow, capture or skip) whose value
// is a string of at most 2048 characters. A different shape is a
// *SchemaError naming the index and field. Patterns are returned as
// written; NormalizePattern, NewSet, Validate and Check judge them.
func ParseJSON(data []byte) ([]Rule, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, &SchemaError{Index: -1, Reason: "not valid JSON: " + jsonReason(err)}
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, &SchemaError{Index: -1, Reason: "must be an array of rule objects, not " + describeToken(tok)}
	}
	var out []Rule
	for dec.More() {
		if len(out) == MaxRules {
			return nil, &SchemaError{Index: MaxRules, Reason: fmt.Sprintf("too many rules: at most %d are allowed", MaxRules)}
		}
		r, err := decodeRule(dec, len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return nil, &SchemaError{Index: -1, Reason: "not valid JSON: " + jsonReason(err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &SchemaError{Index: -1, Reason: "unexpected data after the array"}
	}
	if len(out) < MinRules {
		return nil, &SchemaError{Index: -1, Reason: "must hold at least one rule"}
	}
	return out, nil
}

// decodeRule reads one {"action":"pattern"} object from dec.
func decodeRule(dec *json.Decoder, index int) (Rule, error) {
	fail := func(field, format string, args ...any) (Rule, error) {
		return Rule{}, &SchemaError{Index: index, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	tok, err := dec.Token()
	if err != nil {
		return fail("", "not valid JSON: %s", jsonReason(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fail("", "must be an object with one key (follow, capture or skip), not %s", describeToken(tok))
	}
	var keys []string
	var rule Rule
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail("", "not valid JSON: %s", jsonReason(err))
		}
		key, _ := tok.(string)
		keys = append(keys, key)
		if len(keys) > 1 {
			return fail("", "has more than one key (%s); each rule has exactly one of follow, capture, skip", strings.Join(quoteAll(keys), ", "))
		}
		if !Action(key).Valid() {
			return fail(key, "unknown key; the key is the action: follow, capture or skip")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fail(key, "not valid JSON: %s", jsonReason(err))
		}
		var pattern string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &pattern) != nil {
			return fail(key, "the pattern must be a string, not %s", describeRaw(raw))
		}
		if n := utf8.RuneCountInString(pattern); n > MaxPatternLen {
			return fail(key, "the pattern is %d characters long; at most %d are allowed", n, MaxPatternLen)
		}
		rule = Rule{Action: Action(key), Pattern: pattern}
	}
	if _, err := dec.Token(); err != nil { // the closing }
		return fail("", "not valid JSON: %s", jsonReason(err))
	}
	if len(keys) == 0 {
		return fail("", "is empty; each rule has exactly one of follow, capture, skip")
	}
	return rule, nil
}

// ParseSpec reads the query form of a rule, "action:pattern" (for example
// "follow:same-site" or "skip:https://www.example.com/search"), with the
// same shape checks as ParseJSON. The pattern is returned as written.
func ParseSpec(spec string) (Rule, error) {
	action, pattern, ok := strings.Cut(spec, ":")
	if !ok {
		return Rule{}, &SchemaError{Index: -1, Reason: fmt.Sprintf("%q is not of the form action:pattern", truncate(spec, 100))}
	}
	if !Action(action).Valid() {
		return Rule{}, &SchemaError{Index: -1, Field: action, Reason: fmt.Sprintf("unknown action in %q; the action is follow, capture or skip", truncate(spec, 100))}
	}
	if n := utf8.RuneCountInString(pattern); n > MaxPatternLen {
		return Rule{}, &SchemaError{Index: -1, Field: action, Reason: fmt.Sprintf("the pattern is %d characters long; at most %d are allowed", n, MaxPatternLen)}
	}
	return Rule{Action: Action(action), Pattern: pattern}, nil
}

// CheckShape applies the schema's limits to a rule list built in code or
// from query parameters: 1 to 32 rules, known actions, patterns of at most
// 2048 characters.
func CheckShape(rules []Rule) error {
	if len(rules) < MinRules {
		return &SchemaError{Index: -1, Reason: "must hold at least one rule"}
	}
	if len(rules) > MaxRules {
		return &SchemaError{Index: MaxRules, Reason: fmt.Sprintf("too many rules: at most %d are allowed", MaxRules)}
	}
	for i, r := range rules {
		if !r.Action.Valid() {
			return &SchemaError{Index: i, Field: string(r.Action), Reason: "unknown key; the key is the action: follow, capture or skip"}
		}
		if n := utf8.RuneCountInString(r.Pattern); n > MaxPatternLen {
			return &SchemaError{Index: i, Field: string(r.Action), Reason: fmt.Sprintf("the pattern is %d characters long; at most %d are allowed", n, MaxPatternLen)}
		}
	}
	return nil
}

// NormalizePattern classifies a pattern and returns its normal form:
//   - a scope word (same-origin, same-host, same-site, any), as is;
//   - a lowercase hostname such as "ads.example.com" (letters, digits, '-'
//     and '_' in non-empty labels, or a dotted-decimal IPv4 address), as is;
//   - an http(s) URL, normalised by ParseURL (so the host is lowercased and
//     the default port dropped); the normal form, too, is at most 2048
//     characters, so that a pinned rule list always reads back.
//
// Anything else is an error saying why; it is an "invalid rule pattern".
func NormalizePattern(p string) (Kind, string, error) {
	switch p {
	case SameOrigin, SameHost, SameSite, Any:
		return KindScope, p, nil
	case "":
		return "", p, errors.New("the pattern is empty")
	}
	lower := strings.ToLower(p)
	if strings.Contains(p, "://") || strings.HasPrefix(lower, "http:") || strings.HasPrefix(lower, "https:") {
		u, err := ParseURL(p)
		if err != nil {
			var ue *URLError
			if errors.As(err, &ue) {
				return "", p, fmt.Errorf("not a usable URL prefix: %s", ue.Reason)
			}
			return "", p, err
		}
		if n := utf8.RuneCountInString(u.Normalized); n > MaxPatternLen {
			return "", p, fmt.Errorf("the normalised URL prefix is %d characters long; at most %d are allowed", n, MaxPatternLen)
		}
		return KindURL, u.Normalized, nil
	}
	if err := checkDomainPattern(p); err != nil {
		return "", p, err
	}
	return KindDomain, p, nil
}

func checkDomainPattern(p string) error {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		case 'A' <= c && c <= 'Z':
			return errors.New("a hostname pattern must be lowercase")
		case c == ':':
			return errors.New("a hostname pattern has no scheme or port (write a URL such as https://host:port/ instead)")
		case c == '/':
			return errors.New("a hostname pattern has no path (write a full http(s) URL for a prefix)")
		case c == '*':
			return errors.New("a hostname pattern has no wildcards (it already matches its subdomains)")
		default:
			return errors.New("not a scope word (same-origin, same-host, same-site, any), a lowercase hostname or an http(s) URL")
		}
	}
	for _, label := range strings.Split(p, ".") {
		if label == "" {
			return errors.New("a hostname pattern has no empty labels (no leading, trailing or double dots)")
		}
	}
	canon, err := parseHost(p)
	if err != nil || canon != p {
		return errors.New("a hostname pattern that ends in a number must be a complete dotted-decimal IPv4 address")
	}
	return nil
}

func jsonReason(err error) string {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return "unexpected end of input"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		if v == '{' {
			return "an object"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

func describeRaw(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '[':
		return "an array"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
