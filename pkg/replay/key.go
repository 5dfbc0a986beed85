package replay

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
)

// KeyVar is the setting the signing key comes from.
const KeyVar = "CAPTURE_LEDGER_REPLAY_KEY"

// ServeKey is the key `serve` signs replay tokens with: the configured
// one; or, when none is configured and dev is true, a random key that lives
// as long as the process (ephemeral: its tokens die with it, and no offline
// command can mint one it accepts; the caller says so at startup). Outside
// dev mode a missing key stops start-up, and a short one always does.
func ServeKey(configured string, dev bool) (key []byte, ephemeral bool, err error) {
	switch {
	case configured != "" && len(configured) < MinKeyBytes:
		return nil, false, fmt.Errorf("%s: %d bytes, need at least %d (make run writes a random one to .env.local; or: openssl rand -base64 48)", KeyVar, len(configured), MinKeyBytes)
	case configured != "":
		return []byte(configured), false, nil
	case !dev:
		return nil, false, fmt.Errorf("%s is not set: replay links are signed with it (at least %d bytes; make run writes a random one to .env.local; or: openssl rand -base64 48)", KeyVar, MinKeyBytes)
	}
	key = make([]byte, MinKeyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, false, err
	}
	return key, true, nil
}

// ViewerFiles are the files of ReplayWeb.page that serve offers on replay
// origins, from the replaywebpage npm package, unmodified.
var ViewerFiles = []string{"ui.js", "sw.js"}

// ViewerInstalled says whether dir holds every one of ViewerFiles.
func ViewerInstalled(dir string) bool {
	if dir == "" {
		return false
	}
	for _, f := range ViewerFiles {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// StartupNotes are what serve says at start about replay: a key that dies
// with the process, a built-in viewer whose files are missing.
func StartupNotes(ephemeralKey bool, viewerDir string) []string {
	var notes []string
	if ephemeralKey {
		notes = append(notes, KeyVar+" is not set: replay links are signed with a key made for this process (dev identity) — they stop working when serve stops, and `ledgerctl archives open` cannot mint links it accepts")
	}
	if !ViewerInstalled(viewerDir) {
		notes = append(notes, fmt.Sprintf("ReplayWeb.page is not in %s: archives cannot be opened until it is installed (make replay-viewer)", viewerDir))
	}
	return notes
}
