package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// AllowAlways adds entry to the top-level bash_allow list of the user's
// config file at path, creating the file when there is none: the user
// answered "always" to a command. The file's other keys keep their order
// and values; it is replaced whole, never left half written. This is the
// one write the package does, and only ever to the user-level file.
func AllowAlways(path, entry string) error { return addToList(path, "bash_allow", entry) }

// AllowMCPAlways adds tool (an MCP tool's name, mcp__server__tool) to the
// top-level mcp_allow list of the user's config file at path, as
// AllowAlways does a command: the user answered "always" to its call.
func AllowMCPAlways(path, tool string) error { return addToList(path, "mcp_allow", tool) }

// AllowACPServerAlways adds key (ACPServerKey) to the top-level
// acp_mcp_allow list of the user's config file at path: the user answered
// "always" to starting an MCP server an ACP client offered.
func AllowACPServerAlways(path, key string) error { return addToList(path, "acp_mcp_allow", key) }

// addToList adds entry to the top-level list key of the config file at
// path, the file's other keys kept in their order.
func addToList(path, key, entry string) error {
	if path == "" {
		return errors.New("no user config file (set REIKA_CONFIG or XDG_CONFIG_HOME)")
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read config: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	// The file must stay one the resolver reads.
	if _, err := ParseFile(path, data); err != nil {
		return fmt.Errorf("not changed: %w", err)
	}
	keys, values, err := objectKeys(data)
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	var list []string
	i := slices.Index(keys, key)
	if i >= 0 {
		if err := json.Unmarshal(values[i], &list); err != nil {
			return fmt.Errorf("config file %s: %s: %w", path, key, err)
		}
	}
	if slices.Contains(list, entry) {
		return nil
	}
	list = append(list, entry)
	raw, err := json.Marshal(list)
	if err != nil {
		return err
	}
	if i >= 0 {
		values[i] = raw
	} else {
		keys, values = append(keys, key), append(values, raw)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for j, k := range keys {
		if j > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(values[j])
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	return replaceFile(path, out.Bytes())
}

// objectKeys splits a JSON object into its keys and raw values, in order.
func objectKeys(data []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	var values []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys, values = append(keys, k), append(values, v)
	}
	return keys, values, nil
}

// replaceFile writes data to path through a temporary file beside it,
// keeping the old file's permissions (0600 for a new one).
func replaceFile(path string, data []byte) error {
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".config-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
