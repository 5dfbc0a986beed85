package cmdutil

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// S3Vars are the settings a command reading or writing the bucket needs.
var S3Vars = []string{"CAPTURE_LEDGER_S3_ENDPOINT", "CAPTURE_LEDGER_S3_BUCKET", "CAPTURE_LEDGER_S3_ACCESS_KEY_ID", "CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY"}

// ShareSettings are the settings a command asking or writing OpenFGA
// through the ledger needs.
var ShareSettings = []string{"DATABASE_URL", "CAPTURE_LEDGER_FGA_STORE_ID", "CAPTURE_LEDGER_FGA_MODEL_ID"}

// StoreSettings are the settings a command using the ledger, OpenFGA and
// the bucket needs.
var StoreSettings = append(append([]string{}, ShareSettings...), S3Vars...)

// Printable quotes a string from the ledger that a terminal would not show
// as it is (control characters, bytes that are not UTF-8).
func Printable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(s)
		}
	}
	return s
}

// Unreachable marks a dependency that did not answer (exit 4).
func Unreachable(what string, err error) error {
	if errors.Is(err, ledger.ErrUnreachable) {
		return &ExitError{Code: ExitUnreachable, Err: fmt.Errorf("%s stopped (running it again is safe): %w", what, ledger.UnreachableCause(err))}
	}
	return err
}

// UUIDArg reads a UUID argument (name says which, for the usage error).
func UUIDArg(name, raw string) (string, error) {
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return "", Usagef("%s must be a UUID, got %q", name, raw)
	}
	return id.String(), nil
}

// Deref is *s, or "" for nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func logLevel(s string) slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(s))
	return l
}
