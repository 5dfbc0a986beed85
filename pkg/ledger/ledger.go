// Package ledger holds the domain types every other package shares: OpenFGA
// tuples and the outbox payload that carries them, archive rows, capture
// submissions, and the errors use-cases return. Standard library only.
package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNotFound is "absent or not allowed": the two look the same to callers.
var ErrNotFound = errors.New("not found")

// Tuple is one OpenFGA relationship.
type Tuple struct {
	User     string `json:"user"`
	Relation string `json:"relation"`
	Object   string `json:"object"`
	// Condition is set on a conditional tuple (a share's non_expired_grant);
	// only writes carry one.
	Condition *Condition `json:"condition,omitempty"`
}

// Condition names a condition of the model and the values stored with the
// tuple for some of its parameters.
type Condition struct {
	Name    string         `json:"name"`
	Context map[string]any `json:"context,omitempty"`
}

func (t Tuple) String() string { return t.User + " " + t.Relation + " " + t.Object }

// Validate checks the tuple's shape: type:id on both ends and a relation.
func (t Tuple) Validate() error {
	for _, f := range []struct{ name, v string }{{"user", t.User}, {"object", t.Object}} {
		typ, id, ok := strings.Cut(f.v, ":")
		if !ok || typ == "" || id == "" {
			return fmt.Errorf("%s %q is not type:id", f.name, f.v)
		}
	}
	if t.Relation == "" || strings.ContainsAny(t.Relation, ": #") {
		return fmt.Errorf("relation %q is not a relation name", t.Relation)
	}
	return nil
}

// OutboxPayload is one fga_outbox row's payload: one OpenFGA write request.
type OutboxPayload struct {
	Writes  []Tuple `json:"writes,omitempty"`
	Deletes []Tuple `json:"deletes,omitempty"`
}

// OutboxRow is one claimed fga_outbox row, as the store hands it to the
// outbox's drain: the payload is parsed by ParseOutboxPayload.
type OutboxRow struct {
	ID       int64
	Payload  []byte
	Attempts int
}

// MalformedPayloadError says an outbox payload can never be delivered.
type MalformedPayloadError struct{ Reason string }

func (e *MalformedPayloadError) Error() string { return "outbox payload " + e.Reason }

// ParseOutboxPayload decodes and checks a payload: an object whose optional
// writes and deletes are arrays of {user, relation, object} strings; a write
// may also carry a condition {name, context}.
func ParseOutboxPayload(data []byte) (OutboxPayload, error) {
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return OutboxPayload{}, &MalformedPayloadError{"is not JSON"}
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return OutboxPayload{}, &MalformedPayloadError{fmt.Sprintf("is not an object: %s", jsonType(raw))}
	}
	var p OutboxPayload
	for key := range obj {
		if key != "writes" && key != "deletes" {
			return OutboxPayload{}, &MalformedPayloadError{fmt.Sprintf("has an unknown key %q", key)}
		}
	}
	for _, part := range []struct {
		name string
		dst  *[]Tuple
	}{{"writes", &p.Writes}, {"deletes", &p.Deletes}} {
		v, ok := obj[part.name]
		if !ok {
			continue
		}
		items, ok := v.([]any)
		if !ok {
			return OutboxPayload{}, &MalformedPayloadError{fmt.Sprintf("has a malformed `%s`: %s, not an array", part.name, jsonType(v))}
		}
		for i, it := range items {
			m, ok := it.(map[string]any)
			cond, conditional := m["condition"]
			if !ok || len(m) != 3 && !(len(m) == 4 && conditional) {
				return OutboxPayload{}, &MalformedPayloadError{fmt.Sprintf("has a malformed `%s`: item %d is not {user, relation, object}", part.name, i)}
			}
			var t Tuple
			if conditional {
				c, err := parseCondition(cond, part.name == "writes")
				if err != nil {
					return OutboxPayload{}, &MalformedPayloadError{fmt.Sprintf("has a malformed `%s`: item %d: %v", part.name, i, err)}
				}
				t.Condition = c
			}
			for field, dst := range map[string]*string{"user": &t.User, "relation": &t.Relation, "object": &t.Object} {
				s, ok := m[field].(string)
				if !ok {
					return OutboxPayload{}, &MalformedPayloadError{fmt.Sprintf("has a malformed `%s`: item %d: %s is not a string", part.name, i, field)}
				}
				*dst = s
			}
			if err := t.Validate(); err != nil {
				return OutboxPayload{}, &MalformedPayloadError{fmt.Sprintf("has a malformed `%s`: item %d: %v", part.name, i, err)}
			}
			*part.dst = append(*part.dst, t)
		}
	}
	if len(p.Writes) == 0 && len(p.Deletes) == 0 {
		return OutboxPayload{}, &MalformedPayloadError{"has nothing to write or delete"}
	}
	return p, nil
}

// parseCondition reads a tuple's condition: {name, context?}, on writes only
// (OpenFGA deletes a tuple by user, relation and object).
func parseCondition(v any, write bool) (*Condition, error) {
	if !write {
		return nil, errors.New("a delete carries no condition")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("condition is %s, not an object", jsonType(v))
	}
	name, ok := m["name"].(string)
	if !ok || name == "" {
		return nil, errors.New("condition has no name")
	}
	c := &Condition{Name: name}
	for k, val := range m {
		switch k {
		case "name":
		case "context":
			ctx, ok := val.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("condition context is %s, not an object", jsonType(val))
			}
			if len(ctx) > 0 {
				c.Context = ctx
			}
		default:
			return nil, fmt.Errorf("condition has an unknown key %q", k)
		}
	}
	return c, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// AdmissionTuples are the relations queued, in the admitting transaction,
// when an archive is admitted: the archive's parent job, the job's organization, and
// its owner when a person asked for it.
func AdmissionTuples(archiveID, taskID, orgID string, submittedBy *string) OutboxPayload {
	p := OutboxPayload{Writes: []Tuple{
		{User: CaptureJobEntity(taskID), Relation: "parent", Object: ArchiveEntity(archiveID)},
		{User: OrganizationEntity(orgID), Relation: "parent", Object: CaptureJobEntity(taskID)},
	}}
	if submittedBy != nil && *submittedBy != "" {
		p.Writes = append(p.Writes, Tuple{User: UserEntity(*submittedBy), Relation: "owner", Object: CaptureJobEntity(taskID)})
	}
	return p
}

// Archive is one ledger row as the API shows it.
type Archive struct {
	ID        string `json:"id"`
	TaskID    string `json:"taskId"`
	SourceURL string `json:"sourceUrl"`
	// Title is the captured page's title (its WACZ's pages.jsonl), written
	// when the archive is indexed; "" until then or when it has none.
	Title        string    `json:"title"`
	Labels       []string  `json:"labels"`
	WaczComplete *bool     `json:"waczComplete"`
	CapturedAt   time.Time `json:"capturedAt"`
	ObjectKey    string    `json:"objectKey"`
	Bucket       string    `json:"-"`
	// CrawlID is the crawl whose page this archive captured, if any (the
	// list fills it in; a crawl replays as one collection).
	CrawlID string `json:"crawlId,omitempty"`
	// Why is, when the list was asked to explain itself, the recorded
	// reasons OpenFGA confirmed for this caller.
	Why *[]Reason `json:"why,omitempty"`
}

// Submission is a capture_submissions row that reconcile may register.
type Submission struct {
	TaskID      string
	ManifestKey string
	OrgID       string
	SubmittedBy *string
	// CorrelationID is the correlation the level report recorded (the
	// crawl id unless the runner gave one); nil when none was.
	CorrelationID *string
}
