//go:build !linux

package cli

import (
	"os"
	"testing"
)

// openPTY: the tests open pseudo-terminals on Linux only.
func openPTY(*testing.T) (*os.File, error) { return nil, os.ErrNotExist }
