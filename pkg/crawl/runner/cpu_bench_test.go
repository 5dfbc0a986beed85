package runner_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// processCPU sums the CPU time (user + system) used so far by the running
// processes of this machine whose command name starts with one of the
// given names, by name; with "self", this process's. Empty where /proc
// cannot be read (not Linux). A benchmark reads it before and after a
// phase to say which process the phase's CPU went to.
func processCPU(names ...string) map[string]time.Duration {
	out := map[string]time.Duration{}
	self := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(data)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open || closing+2 > len(s) {
			continue
		}
		name := s[open+1 : closing]
		if filepath.Base(filepath.Dir(path)) == self {
			name = "self"
		}
		for _, want := range names {
			if !strings.HasPrefix(name, want) {
				continue
			}
			// After the name: state, then fields 4 onwards; utime and
			// stime are the 14th and 15th fields of the line.
			f := strings.Fields(s[closing+2:])
			if len(f) < 13 {
				break
			}
			user, _ := strconv.ParseInt(f[11], 10, 64)
			sys, _ := strconv.ParseInt(f[12], 10, 64)
			out[want] += time.Duration(user+sys) * clockTick
			break
		}
	}
	return out
}

// cpuSince is what each name used between before and after.
func cpuSince(before, after map[string]time.Duration) map[string]time.Duration {
	out := make(map[string]time.Duration, len(after))
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}
