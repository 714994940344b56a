package selector

import (
	"context"
	"fmt"

	"github.com/google/cel-go/cel"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// Features are the API server feature gates that change what a selector may
// use. They mirror dracel.Features; the zero value is the conservative
// environment (no allowMultipleAllocations field, no list attributes).
type Features struct {
	// ConsumableCapacity makes device.allowMultipleAllocations available
	// (gate DRAConsumableCapacity: alpha 1.34-1.35, beta on from 1.36).
	ConsumableCapacity bool
	// ListTypeAttributes makes list-typed attributes and includes()
	// available (gate DRAListTypeAttributes: alpha, off, 1.36-1.37).
	ListTypeAttributes bool
}

// Expression is a selector that passed every check.
type Expression struct {
	// Text is the expression as given.
	Text string
	// MaxCost is the estimated worst-case cost.
	MaxCost uint64
	result  dracel.CompilationResult
}

// Error is a selector the API server (or kubedra's bool check) would reject.
type Error struct {
	Expression string
	// Reason says why, in the API server's words where it has them.
	Reason string
}

func (e *Error) Error() string { return e.Reason }

// Compile checks expr exactly as the API server does for a new selector and
// additionally requires a bool result. It returns an *Error when the
// expression would be rejected.
func Compile(expr string, f Features) (*Expression, error) {
	if len(expr) > resourceapi.CELSelectorExpressionMaxLength {
		return nil, &Error{Expression: expr, Reason: fmt.Sprintf("CEL expression is %d characters long, the limit is %d",
			len(expr), resourceapi.CELSelectorExpressionMaxLength)}
	}
	c := dracel.GetCompiler(dracel.Features{
		EnableConsumableCapacity: f.ConsumableCapacity,
		EnableListTypeAttributes: f.ListTypeAttributes,
	})
	res := c.CompileCELExpression(expr, dracel.Options{EnvType: ptr(environment.NewExpressions)})
	if res.Error != nil {
		return nil, &Error{Expression: expr, Reason: res.Error.Detail}
	}
	if res.MaxCost > resourceapi.CELSelectorExpressionMaxCost {
		return nil, &Error{Expression: expr, Reason: fmt.Sprintf(
			"CEL expression is too complex: estimated cost %d exceeds the limit %d (a string function applied to ?.orValue() is a common cause; guard with has() instead)",
			res.MaxCost, resourceapi.CELSelectorExpressionMaxCost)}
	}
	if res.OutputType == nil || !res.OutputType.IsExactType(cel.BoolType) {
		t := "unknown"
		if res.OutputType != nil {
			t = res.OutputType.String()
		}
		return nil, &Error{Expression: expr, Reason: fmt.Sprintf("CEL expression must evaluate to bool, its type is %s", t)}
	}
	return &Expression{Text: expr, MaxCost: res.MaxCost, result: res}, nil
}

// Device is a device as a driver publishes it in a ResourceSlice (v1 shape).
type Device struct {
	Driver     string
	Attributes map[resourceapi.QualifiedName]resourceapi.DeviceAttribute
	Capacity   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity
	// AllowMultipleAllocations as published (nil = unset).
	AllowMultipleAllocations *bool
}

// Matches evaluates e against d. An error is what the scheduler would treat
// as a failed allocation (e.g. a lookup of an attribute the device lacks),
// not as "no match".
func (e *Expression) Matches(ctx context.Context, d Device) (bool, error) {
	ok, _, err := e.result.DeviceMatches(ctx, dracel.Device{
		Driver:                   d.Driver,
		Attributes:               d.Attributes,
		Capacity:                 d.Capacity,
		AllowMultipleAllocations: d.AllowMultipleAllocations,
	})
	return ok, err
}

func ptr[T any](v T) *T { return &v }
