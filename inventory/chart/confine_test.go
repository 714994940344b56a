package chart

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubedra/kubedra/internal/testfs"
)

const confineChart = "apiVersion: v2\nname: c\nversion: 0.1.0\n"

// Issue 29 item 5: scan, check, migrate and fn never touch the network: a
// values.schema.json $ref to a URL is not fetched (Helm's validator would).
func TestSchemaRefNotFetched(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type": "integer"}`))
	}))
	defer srv.Close()
	dir := testfs.Tree(t, map[string]string{
		"c/Chart.yaml":         confineChart,
		"c/values.yaml":        "gpus: 1\n",
		"c/values.schema.json": `{"type": "object", "properties": {"gpus": {"$ref": "` + srv.URL + `/s.json"}}}`,
		"c/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {g: \"{{ .Values.gpus }}\"}\n",
	})
	c, err := Load(filepath.Join(dir, "c"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Render(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the schema's $ref was fetched %d times", n)
	}
	// The schema is still checked.
	os.WriteFile(filepath.Join(dir, "c", "values.schema.json"), []byte(`{"type": "object", "properties": {"gpus": {"type": "string"}}}`), 0o644)
	c, err = Load(filepath.Join(dir, "c"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Render(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "gpus") {
		t.Errorf("values against their schema: %v", err)
	}
}

// A chart's symlink leading outside the chart (to /etc/passwd, read by
// .Files.Get) is refused: the chart is not loaded, the error names the link.
func TestChartSymlinkOutsideRefused(t *testing.T) {
	outside := testfs.Tree(t, map[string]string{"passwd": "root:x:0:0:secret-line\n"})
	dir := testfs.Tree(t, map[string]string{
		"c/Chart.yaml":        confineChart,
		"c/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {p: {{ .Files.Get \"files/passwd\" | quote }}}\n",
		"c/files/.keep":       "",
	})
	if err := os.Symlink(filepath.Join(outside, "passwd"), filepath.Join(dir, "c", "files", "passwd")); err != nil {
		t.Fatal(err)
	}
	c, err := Load(filepath.Join(dir, "c"), Options{})
	if err == nil {
		fs, _ := c.Render(context.Background(), nil)
		for _, f := range fs {
			if strings.Contains(string(f.Text), "secret-line") {
				t.Errorf("the file outside the chart reached the render:\n%s", f.Text)
			}
		}
		t.Fatal("a chart with a symlink leaving it was loaded")
	}
	if !strings.Contains(err.Error(), filepath.Join("files", "passwd")) || !strings.Contains(err.Error(), "outside") {
		t.Errorf("error does not name the link: %v", err)
	}
}

// Issue 29 item 10: a template that loops is not rendered without end:
// the render stops at RenderTimeout, or when the context is cancelled (a
// signal), with an error naming the chart.
func TestRenderBounded(t *testing.T) {
	dir := testfs.Tree(t, map[string]string{
		"c/Chart.yaml":        confineChart,
		"c/templates/cm.yaml": "{{ range until 2000000000 }}{{ end }}apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
	})
	c, err := Load(filepath.Join(dir, "c"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := RenderTimeout
	RenderTimeout = 100 * time.Millisecond
	defer func() { RenderTimeout = old }()
	if _, err := c.Render(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "did not render within") {
		t.Errorf("timeout: %v", err)
	}
	RenderTimeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := c.Render(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
