package goreleaser

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/goreleaser/goreleaser/v2/pkg/config"
)

// configFile is kubedra's release configuration.
var configFile = filepath.Join("..", "..", "..", ".goreleaser.yaml")

// TestCheck does what `goreleaser check` does to a configuration, with
// GoReleaser's own configuration package instead of a 440-second build of
// the whole tool: the file loads strictly into GoReleaser's types (an
// unknown or mistyped field fails, as it fails `goreleaser check`), it is a
// version 2 file, and it sets no field GoReleaser marks deprecated
// (`check` warns and exits 1 on those).
func TestCheck(t *testing.T) {
	raw, err := os.ReadFile(configFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "version: 2") {
		t.Errorf("%s is not a version 2 configuration", configFile)
	}
	cfg, err := config.Load(configFile)
	if err != nil {
		t.Fatalf("goreleaser would reject %s: %v", configFile, err)
	}
	for _, path := range deprecated(reflect.ValueOf(cfg), "") {
		t.Errorf("%s sets %s, which GoReleaser deprecates", configFile, path)
	}
	if len(cfg.Builds) == 0 || cfg.Builds[0].Main != "./cmd/kubedra" {
		t.Errorf("the configuration builds %+v, not ./cmd/kubedra", cfg.Builds)
	}
}

// TestCheckRejects proves the check can fail: a mistyped field, an unknown
// one and a deprecated one are each reported.
func TestCheckRejects(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"unknown":  "version: 2\nbuilds:\n  - main: ./cmd/kubedra\n    binaryy: kubedra\n",
		"mistyped": "version: 2\nbuilds:\n  - main: [./cmd/kubedra]\n",
	} {
		p := filepath.Join(dir, name+".yaml")
		os.WriteFile(p, []byte(text), 0o644)
		if _, err := config.Load(p); err == nil {
			t.Errorf("%s: a configuration goreleaser check rejects was accepted:\n%s", name, text)
		}
	}
	p := filepath.Join(dir, "deprecated.yaml")
	os.WriteFile(p, []byte("version: 2\narchives:\n  - format: tar.gz\n"), 0o644)
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := deprecated(reflect.ValueOf(cfg), ""); len(got) != 1 || got[0] != "archives[0].format" {
		t.Errorf("deprecated fields found: %v, want [archives[0].format]", got)
	}
}

// deprecated lists the fields set in v whose jsonschema tag says
// deprecated=true (GoReleaser's marker, the one its schema publishes), by
// their YAML paths.
func deprecated(v reflect.Value, path string) []string {
	var out []string
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			out = append(out, deprecated(v.Elem(), path)...)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				name = f.Name
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			if f.Anonymous {
				p = path
			}
			if strings.Contains(f.Tag.Get("jsonschema"), "deprecated=true") && !v.Field(i).IsZero() {
				out = append(out, p)
			}
			out = append(out, deprecated(v.Field(i), p)...)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			out = append(out, deprecated(v.Index(i), path+"["+strconv.Itoa(i)+"]")...)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			out = append(out, deprecated(iter.Value(), path+"."+fmt.Sprint(iter.Key()))...)
		}
	}
	return out
}
