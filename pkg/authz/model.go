package authz

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"github.com/openfga/language/pkg/go/transformer"
	"google.golang.org/protobuf/encoding/protojson"
)

// SyntaxError is one problem in a model written in the DSL. Line and Column
// count from 1.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// ModelError says a model in the DSL does not parse; File names where it
// came from when known.
type ModelError struct {
	File   string
	Errors []SyntaxError
	Err    error // set when the parser gave no positions
}

func (e *ModelError) Error() string {
	file := e.File
	if file == "" {
		file = "model"
	}
	if len(e.Errors) == 0 {
		return fmt.Sprintf("%s does not parse: %v", file, e.Err)
	}
	parts := make([]string, len(e.Errors))
	for i, se := range e.Errors {
		parts[i] = fmt.Sprintf("%s:%d:%d: %s", file, se.Line, se.Column, se.Msg)
	}
	return strings.Join(parts, "\n")
}

func (e *ModelError) Unwrap() error { return e.Err }

var syntaxPos = regexp.MustCompile(`^syntax error at line=(\d+), column=(\d+): (.*)$`)

// ParseModel turns a model in the DSL into OpenFGA's protobuf form. A model
// that does not parse gives a *ModelError naming each line (counted from 1).
func ParseModel(dsl string) (*openfgav1.AuthorizationModel, error) {
	m, err := transformer.TransformDSLToProto(dsl)
	if err == nil {
		if len(m.GetTypeDefinitions()) == 0 {
			return nil, &ModelError{Err: errors.New("the model defines no types")}
		}
		// The parser leaves direct assignments as a oneof holding a nil
		// message, which reads back as "no rewrite"; a JSON round trip
		// gives the model exactly as a server would receive it.
		raw, err := protojson.Marshal(m)
		if err != nil {
			return nil, err
		}
		var clean openfgav1.AuthorizationModel
		if err := protojson.Unmarshal(raw, &clean); err != nil {
			return nil, err
		}
		return &clean, nil
	}
	me := &ModelError{Err: err}
	var multi *transformer.OpenFgaDslSyntaxMultipleError
	if errors.As(err, &multi) {
		for _, one := range multi.Errors {
			// The language package keeps positions unexported and 0-based
			// lines; its message is the only place they appear.
			sm := syntaxPos.FindStringSubmatch(strings.TrimSpace(one.Error()))
			if sm == nil {
				continue
			}
			line, _ := strconv.Atoi(sm[1])
			col, _ := strconv.Atoi(sm[2])
			me.Errors = append(me.Errors, SyntaxError{Line: line + 1, Column: col + 1, Msg: sm[3]})
		}
	}
	return nil, me
}

// modelDSL renders a stored model back into the DSL.
func modelDSL(m *openfgav1.AuthorizationModel) (string, error) {
	return transformer.TransformJSONProtoToDSL(m)
}

func writeModelRequest(storeID string, m *openfgav1.AuthorizationModel) *openfgav1.WriteAuthorizationModelRequest {
	return &openfgav1.WriteAuthorizationModelRequest{
		StoreId:         storeID,
		TypeDefinitions: m.GetTypeDefinitions(),
		SchemaVersion:   m.GetSchemaVersion(),
		Conditions:      m.GetConditions(),
	}
}
