package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Streams are the three standard streams a command uses: stdout is data,
// stderr is status.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
}

// StdStreams returns the process's standard streams.
func StdStreams() Streams { return Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr} }

// Exit codes, listed under EXIT STATUS in the root help.
const (
	ExitOK          = 0
	ExitFailure     = 1 // the command ran and failed (e.g. an assertion, a delivery)
	ExitUsage       = 2 // bad flags, arguments or configuration; nothing was changed
	ExitIncomplete  = 3 // the work finished but left something undone (e.g. reconcile: missing manifests)
	ExitUnreachable = 4 // PostgreSQL, OpenFGA or S3 could not be reached
)

const ExitStatusHelp = `EXIT STATUS
  0  success
  1  the command ran and failed
  2  bad flags, arguments or configuration (nothing was changed)
  3  finished but left work undone (e.g. reconcile found missing manifests)
  4  PostgreSQL, OpenFGA or S3 could not be reached`

// ExitError carries an exit code chosen by a command, with an optional
// message (empty when the command already printed what went wrong).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageError marks a problem with what the user typed.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef returns a usage error (exit 2).
func Usagef(format string, a ...any) error { return UsageError{fmt.Errorf(format, a...)} }

// AsFlags renders a use-case's *ledger.FieldError as a usage error naming
// the flag that set the field: flags maps a field's first segment to its
// flag, and a position in a repeated field reads "#N", counted from 1 as a
// person counts the flags given (rule/1, the second → --rule #2).
// The API renders the same error as querystring/rule/1 or body/…; any other
// error passes unchanged.
func AsFlags(err error, flags map[string]string) error {
	var fe *ledger.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	segs := strings.Split(fe.Field, "/")
	name, ok := flags[segs[0]]
	if !ok {
		name = segs[0]
	}
	for _, seg := range segs[1:] {
		if n, err := strconv.Atoi(seg); err == nil {
			name += " #" + strconv.Itoa(n+1)
		} else {
			name += "/" + seg
		}
	}
	return UsageError{fmt.Errorf("%s %s", name, fe.Reason)}
}

// Classify maps an error to an exit code and the message the user sees. This
// is the one place errors become exit codes.
func Classify(err error) (int, string) {
	var exit *ExitError
	var missing *config.MissingError
	var invalid *config.InvalidError
	var setting *ledger.SettingError
	var field *ledger.FieldError
	var refused *app.RefusedError
	var usage UsageError
	switch {
	case errors.As(err, &exit):
		if exit.Err == nil {
			return exit.Code, ""
		}
		return exit.Code, exit.Err.Error()
	case errors.Is(err, ledger.ErrUnreachable):
		// Whichever dependency it was (PostgreSQL, OpenFGA, S3, the runner's
		// webhook): the message is the adapter's own, naming it.
		return ExitUnreachable, ledger.UnreachableCause(err).Error()
	case errors.As(err, &setting):
		return ExitUsage, setting.Error()
	case errors.As(err, &missing), errors.As(err, &invalid), errors.As(err, &usage):
		return ExitUsage, err.Error()
	case errors.As(err, &refused):
		// serve refusing its settings as given, before opening anything.
		return ExitUsage, err.Error()
	case errors.As(err, &field):
		// What the user typed, refused by a use-case; the command did not
		// name the flag (AsFlags), so the message names the field.
		return ExitUsage, err.Error()
	case errors.Is(err, context.Canceled):
		return ExitFailure, "interrupted"
	}
	return ExitFailure, err.Error()
}
