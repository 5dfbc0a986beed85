package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var assignment = regexp.MustCompile(`^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)$`)

// EnvFile is one parsed env file: the names it declares, in order, and their
// values (an empty value is kept here and treated as unset by Load).
type EnvFile struct {
	Path   string
	Names  []string
	Values map[string]string
}

// ParseEnvFile reads NAME=value lines. Blank lines and # comments are
// skipped; values may be single- or double-quoted; an unquoted value ends at
// " #". Any other line is an error naming the file and line.
func ParseEnvFile(path string, data []byte) (EnvFile, error) {
	f := EnvFile{Path: path, Values: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := assignment.FindStringSubmatch(line)
		if m == nil {
			return EnvFile{}, fmt.Errorf("%s:%d: expected NAME=value", path, n)
		}
		val, err := unquote(strings.TrimSpace(m[2]))
		if err != nil {
			return EnvFile{}, fmt.Errorf("%s:%d: %s: %w", path, n, m[1], err)
		}
		if _, seen := f.Values[m[1]]; !seen {
			f.Names = append(f.Names, m[1])
		}
		f.Values[m[1]] = val
	}
	if err := sc.Err(); err != nil {
		return EnvFile{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

func unquote(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	switch q := v[0]; q {
	case '"', '\'':
		end := strings.LastIndexByte(v, q)
		if end == 0 {
			return "", errors.New("unterminated quote")
		}
		if rest := strings.TrimSpace(v[end+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
			return "", fmt.Errorf("text after the closing quote: %q", rest)
		}
		inner := v[1:end]
		if q == '"' {
			inner = strings.NewReplacer(`\n`, "\n", `\"`, `"`, `\\`, `\`).Replace(inner)
		}
		return inner, nil
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v), nil
}

// readEnvFile returns the parsed file, or ok=false when it does not exist.
func readEnvFile(path string) (EnvFile, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return EnvFile{}, false, nil
	}
	if err != nil {
		return EnvFile{}, false, err
	}
	f, err := ParseEnvFile(filepath.Base(path), data)
	return f, err == nil, err
}

// UpsertEnvLocal sets names in dir/.env.local, keeping every other line
// (comments included) and replacing lines that already declare a name. Tools
// write only .env.local; .env belongs to people.
func UpsertEnvLocal(dir string, values map[string]string) (string, error) {
	path := filepath.Join(dir, ".env.local")
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return path, err
	}
	for name, v := range values {
		if !assignment.MatchString(name + "=") {
			return path, fmt.Errorf("not a variable name: %q", name)
		}
		if strings.ContainsAny(v, "\n\r") {
			return path, fmt.Errorf("%s: value contains a line break", name)
		}
	}
	done := map[string]bool{}
	var out []string
	if len(old) > 0 {
		for _, line := range strings.Split(strings.TrimRight(string(old), "\n"), "\n") {
			if m := assignment.FindStringSubmatch(line); m != nil {
				if v, ok := values[m[1]]; ok {
					if done[m[1]] {
						continue // a second declaration of a name we set would win over ours
					}
					line, done[m[1]] = m[1]+"="+v, true
				}
			}
			out = append(out, line)
		}
	}
	var rest []string
	for name := range values {
		if !done[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	for _, name := range rest {
		out = append(out, name+"="+values[name])
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(out, "\n")+"\n"), 0o600); err != nil {
		return path, err
	}
	return path, os.Rename(tmp, path)
}
