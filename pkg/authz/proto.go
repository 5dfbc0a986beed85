package authz

import (
	"fmt"
	"unicode/utf8"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

func toStruct(m map[string]any) (*structpb.Struct, error) {
	if len(m) == 0 {
		return nil, nil
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		return nil, fmt.Errorf("context: %w", err)
	}
	return s, nil
}

func toTupleKey(t Tuple) (*openfgav1.TupleKey, error) {
	tk := &openfgav1.TupleKey{User: t.User, Relation: t.Relation, Object: t.Object}
	if t.Condition != nil {
		ctx, err := toStruct(t.Condition.Context)
		if err != nil {
			return nil, fmt.Errorf("tuple %s: condition %w", t, err)
		}
		tk.Condition = &openfgav1.RelationshipCondition{Name: t.Condition.Name, Context: ctx}
	}
	return tk, nil
}

// readPageSize is the page of ReadTuples: OpenFGA's maximum, which is also
// the most tuples one Write may carry.
const readPageSize = 100

// fromTupleKey is the Tuple of a stored tuple key, with its condition.
func fromTupleKey(tk *openfgav1.TupleKey) Tuple {
	t := Tuple{User: tk.GetUser(), Relation: tk.GetRelation(), Object: tk.GetObject()}
	if c := tk.GetCondition(); c != nil && c.GetName() != "" {
		t.Condition = &Condition{Name: c.GetName()}
		if c.GetContext() != nil && len(c.GetContext().GetFields()) > 0 {
			t.Condition.Context = c.GetContext().AsMap()
		}
	}
	return t
}

func toTupleKeys(ts []Tuple) ([]*openfgav1.TupleKey, error) {
	out := make([]*openfgav1.TupleKey, 0, len(ts))
	for _, t := range ts {
		tk, err := toTupleKey(t)
		if err != nil {
			return nil, err
		}
		out = append(out, tk)
	}
	return out, nil
}

func toCheckParts(r CheckRequest) (*openfgav1.CheckRequestTupleKey, *openfgav1.ContextualTupleKeys, *structpb.Struct, error) {
	// OpenFGA's batch check never answers for a name that is not valid
	// UTF-8 (seen with v1.22.1 embedded): refuse such a question up front.
	for _, v := range append([]string{r.User, r.Relation, r.Object}, tupleStrings(r.Contextual)...) {
		if !utf8.ValidString(v) {
			return nil, nil, nil, &Error{Op: "check", Kind: KindInvalid, Code: "invalid_utf8", Err: fmt.Errorf("%q is not valid UTF-8", v)}
		}
	}
	tk := &openfgav1.CheckRequestTupleKey{User: r.User, Relation: r.Relation, Object: r.Object}
	var contextual *openfgav1.ContextualTupleKeys
	if len(r.Contextual) > 0 {
		keys, err := toTupleKeys(r.Contextual)
		if err != nil {
			return nil, nil, nil, err
		}
		contextual = &openfgav1.ContextualTupleKeys{TupleKeys: keys}
	}
	ctx, err := toStruct(r.Context)
	if err != nil {
		return nil, nil, nil, err
	}
	return tk, contextual, ctx, nil
}

func tupleStrings(ts []Tuple) []string {
	out := make([]string, 0, 3*len(ts))
	for _, t := range ts {
		out = append(out, t.User, t.Relation, t.Object)
	}
	return out
}
