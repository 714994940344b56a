package cluster

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// fakeServer is an API server on loopback that answers /version and
// lists every resource as one page whose continue token is always "again".
func fakeServer(t *testing.T, block <-chan struct{}) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if block != nil {
			select {
			case <-block:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/version":
			w.Write([]byte(`{"major":"1","minor":"34","gitVersion":"v1.34.0"}`))
		case r.URL.Path == "/api":
			w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
		case r.URL.Path == "/apis":
			w.Write([]byte(`{"kind":"APIGroupList","groups":[]}`))
		default:
			parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
			gv := strings.Join(parts[1:len(parts)-1], "/")
			res := parts[len(parts)-1]
			kind := strings.ToUpper(res[:1]) + strings.TrimSuffix(res[1:], "s")
			kind = strings.ReplaceAll(strings.ReplaceAll(kind, "Daemonset", "DaemonSet"), "Replicaset", "ReplicaSet")
			kind = strings.ReplaceAll(kind, "Resourcequota", "ResourceQuota")
			w.Write([]byte(`{"kind":"` + kind + `List","apiVersion":"` + gv + `","metadata":{"continue":"again"},"items":[]}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Issue 29 item 11: a server that repeats a continue token would be
// followed for ever: the listing stops with a problem that says so.
func TestReadStopsOnRepeatedContinue(t *testing.T) {
	srv := fakeServer(t, nil)
	r, err := NewReader(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range f.Problems {
		if strings.Contains(p.Message, "continue token") {
			found = true
		}
	}
	if !found {
		t.Errorf("no problem names the repeated continue token: %+v", f.Problems)
	}
}

// A server that never answers, and an exec credential plugin that never
// ends, stop the read at the request timeout; without --request-timeout
// the default applies.
func TestReadRequestTimeout(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	srv := fakeServer(t, block)
	r, err := NewReader(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if r.Timeout != DefaultRequestTimeout {
		t.Errorf("default timeout %v, want %v", r.Timeout, DefaultRequestTimeout)
	}
	for name, cfg := range map[string]*rest.Config{
		"silent server": {Host: srv.URL, Timeout: 200 * time.Millisecond},
		"exec plugin": {Host: fakeServer(t, nil).URL, Timeout: 200 * time.Millisecond, ExecProvider: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: "sleep", Args: []string{"3"}, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}},
	} {
		r, err := NewReader(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Read(context.Background()); err == nil || !strings.Contains(err.Error(), "no answer within 200ms") && !strings.Contains(err.Error(), "Timeout") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
