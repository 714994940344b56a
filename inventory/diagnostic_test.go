package inventory_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kubedra/kubedra/inventory"
)

func TestDiagnosticsError(t *testing.T) {
	t.Parallel()
	inv := inventory.Diagnostic{Severity: inventory.Error, Rule: "simulate/inventory", File: "inv.yaml", Line: 4, Message: "pool a: count is required"}
	unsafe := inventory.Diagnostic{Severity: inventory.Error, Rule: "bundle/unsafe", Message: "EKS Auto Mode node(s) n1"}
	tests := []struct {
		name  string
		diags inventory.Diagnostics
		want  string
	}{
		{"none", nil, ""},
		{"one at a line", inventory.Diagnostics{inv}, "inv.yaml:4: pool a: count is required"},
		{"one without a file", inventory.Diagnostics{unsafe}, "EKS Auto Mode node(s) n1"},
		{"several", inventory.Diagnostics{inv, unsafe}, "2 problems:\n  - inv.yaml:4: pool a: count is required\n  - EKS Auto Mode node(s) n1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.diags.Err()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Err() = %v, want nil", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Err() = %v, want %q", err, tt.want)
			}
			var de *inventory.DiagnosticsError
			if !errors.As(fmt.Errorf("wrapped: %w", err), &de) || len(de.Diagnostics) != len(tt.diags) {
				t.Errorf("errors.As: %v", de)
			}
		})
	}
}
