package authz

import (
	"errors"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// kindOfCode classifies an OpenFGA error code name (what the HTTP API puts
// in "code", and the name of the numeric gRPC code in-process).
func kindOfCode(name string) ErrorKind {
	switch name {
	case "write_failed_due_to_invalid_input":
		return KindAlreadyInState
	case "store_id_not_found", "authorization_model_not_found", "latest_authorization_model_not_found":
		return KindNotFound
	case "aborted", "Aborted":
		return KindConflict
	}
	if v, ok := openfgav1.ErrorCode_value[name]; ok && v != 0 {
		return KindInvalid // every other 2xxx code is an input error
	}
	return KindOther
}

// fromStatus turns an in-process OpenFGA error into an *Error, reading only
// its numeric code (OpenFGA's own codes travel as gRPC status codes).
func fromStatus(op string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return &Error{Op: op, Err: err}
	}
	c := int32(st.Code())
	e := &Error{Op: op, Err: errors.New(st.Message())}
	switch {
	case openfgav1.ErrorCode_name[c] != "" && c != 0:
		e.Code = openfgav1.ErrorCode_name[c]
		e.Kind = kindOfCode(e.Code)
	case openfgav1.NotFoundErrorCode_name[c] != "" && c != 0:
		e.Code = openfgav1.NotFoundErrorCode_name[c]
		e.Kind = kindOfCode(e.Code)
	case openfgav1.InternalErrorCode_name[c] != "" && c != 0:
		e.Code = openfgav1.InternalErrorCode_name[c]
	case st.Code() == codes.InvalidArgument:
		e.Code, e.Kind = "validation_error", KindInvalid
	case st.Code() == codes.Aborted:
		e.Code, e.Kind = "aborted", KindConflict
	case st.Code() == codes.NotFound:
		e.Code, e.Kind = "not_found", KindNotFound
	default:
		e.Code = st.Code().String()
	}
	return e
}
