package rewrite_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubedra/kubedra/rewrite/plan"
)

// FuzzRewrite migrates arbitrary input with the test rules. Property: no
// panic; when the input is accepted, the output parses again and a second
// run changes nothing. A failed file must come back unchanged. Seeds are
// the golden inputs; crashers are kept in testdata/fuzz/FuzzRewrite.
func FuzzRewrite(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/input.*")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	o := plan.Options{Strategy: plan.Claims, AllowLossy: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := runStdin(t, data, o)
		if r.failed {
			if !bytes.Equal(r.out, data) {
				t.Fatalf("failed (%s) but changed the input", diagnostics(r.res))
			}
			return
		}
		if bytes.Equal(r.out, data) {
			return // nothing to migrate: the input is passed through as it is
		}
		if err := reparseAll(r.out); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, r.out)
		}
		again := runStdin(t, r.out, o)
		if again.failed {
			t.Fatalf("second run failed: %s\ninput:\n%s\noutput:\n%s", diagnostics(again.res), data, r.out)
		}
		if !bytes.Equal(again.out, r.out) {
			t.Fatalf("second run changed the output:\n--- first\n%s\n--- second\n%s", r.out, again.out)
		}
	})
}
