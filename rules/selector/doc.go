// Package selector compiles and cost-checks DRA CEL device selectors with
// the same library and the same steps the API server uses when it validates
// a DeviceClass, ResourceClaim or ResourceClaimTemplate
// (k8s.io/kubernetes pkg/apis/resource/validation validateCELExpression):
//
//  1. the expression must be at most CELSelectorExpressionMaxLength long;
//  2. it is compiled with k8s.io/dynamic-resource-allocation/cel's
//     GetCompiler(Features{...}).CompileCELExpression with the
//     NewExpressions environment;
//  3. a compilation error rejects it;
//  4. an estimated worst-case cost above CELSelectorExpressionMaxCost
//     rejects it ("too complex").
//
// kubedra adds one check the API server does not make: the static output
// type must be bool. The API server accepts an expression whose type is an
// attribute value (dyn) and only fails when it is evaluated; kubedra never
// emits such an expression.
//
// Compiled expressions can be evaluated against devices the caller gives
// (Matches), which is how tests show that a selector picks the devices a real
// driver publishes and rejects the others. The package never fetches devices.
package selector
