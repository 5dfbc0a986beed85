package main

import (
	"os"
	"testing"
)

// runMain, set to 1 in a child's environment, makes the test binary
// ledgerctl itself: TestMain runs main with the child's arguments, so a
// test can start real `ledgerctl serve` processes (and kill them) without
// building the binary first.
const runMain = "LEDGERCTL_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMain) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}
