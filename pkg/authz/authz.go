// Package authz is ledgerctl's OpenFGA adapter: one small Client interface
// with two implementations that pass the same conformance suite
// (authztest.RunConformance) — Embedded runs OpenFGA in-process (memory
// datastore in tests, its own PostgreSQL database for real use) and Remote
// talks to an OpenFGA cluster over HTTP with the go-sdk.
//
// Beyond the client it holds the questions the API asks (ArchiveCheck,
// MaySubmit), the grant/revoke logic of `ledgerctl fga grant|revoke`, the
// model deploy, and the in-process runner of the model's store tests.
package authz

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Tuple is one relationship, e.g. user:alice submitter organization:acme.
type Tuple struct {
	User, Relation, Object string
	// Condition is set for conditional tuples (e.g. non_expired_grant).
	Condition *Condition
}

// Condition names a condition of the model and the values stored with the
// tuple for some of its parameters.
type Condition struct {
	Name    string
	Context map[string]any
}

func (t Tuple) String() string { return t.User + " " + t.Relation + " " + t.Object }

// CheckRequest asks whether User has Relation on Object.
type CheckRequest struct {
	User, Relation, Object string
	// Contextual tuples hold only for this check (e.g. the caller's
	// organization memberships, which are never stored).
	Contextual []Tuple
	// Context is the request context for conditions (e.g. current_time).
	Context map[string]any
}

// Model is a stored authorization model.
type Model struct {
	ID  string
	DSL string
}

// Client is what ledgerctl needs from OpenFGA. A client is bound to one store
// and, once known, one authorization model: FindOrCreateStore and WriteModel
// move the binding; the constructors take it from configuration.
type Client interface {
	// Check answers one question with HIGHER_CONSISTENCY, so a revocation
	// takes effect at once (a presigned URL cannot be taken back).
	Check(ctx context.Context, req CheckRequest) (bool, error)
	// BatchCheck answers many questions at the default consistency, in the
	// order asked, splitting them into the server's maximum batch size.
	BatchCheck(ctx context.Context, reqs []CheckRequest) ([]bool, error)
	// Write applies writes and deletes in one atomic call. When it fails
	// because a tuple already exists or does not exist, the error is a
	// *WriteError with Kind KindAlreadyInState (errors.Is(err,
	// ErrAlreadyInState)), distinct from KindInvalid validation errors.
	Write(ctx context.Context, writes, deletes []Tuple) error
	// WriteIdempotent is Write where tuples already in the desired state are
	// not errors; every other tuple is still delivered.
	WriteIdempotent(ctx context.Context, writes, deletes []Tuple) error
	// ReadTuple reports whether exactly this tuple (user, relation, object)
	// is stored, whatever its condition.
	ReadTuple(ctx context.Context, t Tuple) (bool, error)
	// WriteModel stores a model given in the DSL and binds the client to it.
	WriteModel(ctx context.Context, dsl string) (modelID string, err error)
	// ReadModel returns the bound model, or the store's latest when none is
	// bound.
	ReadModel(ctx context.Context) (Model, error)
	// ReadTuples returns one page of the tuples stored in the bound store
	// (conditions and their stored context included) and the continuation
	// token of the next page, "" after the last. Start with "".
	ReadTuples(ctx context.Context, continuation string) (tuples []Tuple, next string, err error)
	// FindOrCreateStore binds the client to the store named name, creating
	// it when there is none.
	FindOrCreateStore(ctx context.Context, name string) (storeID string, err error)
	// FindStore returns the id of the store named name, "" when there is
	// none. It neither creates a store nor moves the binding.
	FindStore(ctx context.Context, name string) (storeID string, err error)
	// UseStore binds the client to a known store and model ("" for the
	// store's latest).
	UseStore(storeID, modelID string)
	// Target is the store and model the client is bound to.
	Target() (storeID, modelID string)
	// Close releases the client (and, when embedded, the datastore).
	Close() error
}

// Entity helpers build the object strings of the model: the centre's tuple
// grammar (pkg/ledger/tuples.go).
func User(subject string) string    { return ledger.UserEntity(subject) }
func Organization(id string) string { return ledger.OrganizationEntity(id) }
func Archive(id string) string      { return ledger.ArchiveEntity(id) }
func CaptureJob(id string) string   { return ledger.CaptureJobEntity(id) }

// MembershipTuples are the contextual tuples saying subject is a member of
// each of orgs, as the identity token claims. Membership is never stored.
func MembershipTuples(subject string, orgs []string) []Tuple {
	out := make([]Tuple, 0, len(orgs))
	for _, o := range orgs {
		out = append(out, Tuple{User: User(subject), Relation: "member", Object: Organization(o)})
	}
	return out
}

// ArchiveCheck is the question asked before handing out an archive: may
// subject (a member of orgs, per its token) view archive archiveID at now?
func ArchiveCheck(subject string, orgs []string, archiveID string, now time.Time) CheckRequest {
	return CheckRequest{
		User:       User(subject),
		Relation:   "can_view",
		Object:     Archive(archiveID),
		Contextual: MembershipTuples(subject, orgs),
		Context:    map[string]any{"current_time": now.UTC().Format(time.RFC3339)},
	}
}

// SubmitCheck asks whether subject may start crawls for org. It carries no
// contextual tuples on purpose: membership must never allow submitting.
func SubmitCheck(subject, org string) CheckRequest {
	return CheckRequest{User: User(subject), Relation: "can_submit", Object: Organization(org)}
}

// MaySubmit says whether subject may start a crawl: false without asking
// when orgs is empty, else one can_submit Check per organization in parallel
// (HIGHER_CONSISTENCY, no contextual tuples), true if any allows it.
func MaySubmit(ctx context.Context, c Client, subject string, orgs []string) (bool, error) {
	if len(orgs) == 0 {
		return false, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		ok  bool
		err error
	}
	answers := make(chan answer, len(orgs))
	for _, org := range orgs {
		go func() {
			ok, err := c.Check(ctx, SubmitCheck(subject, org))
			answers <- answer{ok, err}
		}()
	}
	var firstErr error
	for range orgs {
		a := <-answers
		if a.err == nil && a.ok {
			return true, nil // the others are cancelled
		}
		if a.err != nil && firstErr == nil {
			firstErr = a.err
		}
	}
	return false, firstErr
}

// ErrAlreadyInState matches (errors.Is) a write that failed only because a
// tuple to write already exists or a tuple to delete does not.
var ErrAlreadyInState = errors.New("tuple already in the desired state")

// ErrInvalidInput matches (errors.Is) a request OpenFGA rejected as invalid
// (unknown type or relation, malformed tuple, condition mismatch…).
var ErrInvalidInput = errors.New("invalid input")

// ErrorKind classifies a failed OpenFGA call.
type ErrorKind int

const (
	KindOther          ErrorKind = iota
	KindAlreadyInState           // write_failed_due_to_invalid_input: exists / does not exist
	KindInvalid                  // validation errors
	KindConflict                 // a concurrent write or a tuple stored with another condition
	KindNotFound                 // unknown store or model
)

func (k ErrorKind) String() string {
	switch k {
	case KindAlreadyInState:
		return "already in state"
	case KindInvalid:
		return "invalid"
	case KindConflict:
		return "conflict"
	case KindNotFound:
		return "not found"
	}
	return "other"
}

// Error is a failure reported by OpenFGA, classified by its numeric or named
// code (never by its message).
type Error struct {
	Op   string    // the call, e.g. "write"
	Kind ErrorKind // what the code means to us
	Code string    // OpenFGA's code name, e.g. write_failed_due_to_invalid_input
	Err  error
}

// WriteError is the Error of a Write.
type WriteError = Error

func (e *Error) Error() string {
	msg := e.Err.Error()
	if e.Code != "" && !strings.Contains(msg, e.Code) {
		msg = e.Code + ": " + msg
	}
	return "OpenFGA " + e.Op + ": " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is match ErrAlreadyInState and ErrInvalidInput.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrAlreadyInState:
		return e.Kind == KindAlreadyInState
	case ErrInvalidInput:
		return e.Kind == KindInvalid
	}
	return false
}

// KindOf returns the Kind of an *Error in err's chain, else KindOther.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindOther
}

// UnreachableError says OpenFGA (or the embedded OpenFGA's datastore) could
// not be reached. Where names the URL or host, never a password.
type UnreachableError struct {
	What  string // "OpenFGA" or "the OpenFGA datastore (PostgreSQL)"
	Where string
	Err   error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach %s at %s: %s", e.What, e.Where, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ledger.ErrUnreachable) true.
func (e *UnreachableError) Is(target error) bool { return target == ledger.ErrUnreachable }

// IsUnreachable reports whether err says OpenFGA could not be reached.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}
