// Package fuzz holds FuzzDetect, detection fuzzed (fuzz_test.go). It is a
// package of its own, as rewrite/fuzz is, so that its test binary links
// only the reader and detection and not what the other detect tests link
// (k8s.io/api's core types, go-cmp: a fifth of the binary): Go's fuzzer
// instruments every linked package, copies and compares the whole coverage
// map at every execution and sends it to its worker at every round trip,
// so the binary's size sets most of an execution's cost.
package fuzz
