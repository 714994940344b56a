// Package fuzz holds FuzzRead, the reader fuzzed (fuzz_test.go). It is a
// package of its own, as rewrite/fuzz is, so that its test binary links
// only the reader and not what the other files tests link: Go's fuzzer
// instruments every linked package, copies and compares the whole coverage
// map at every execution and sends it to its worker at every round trip,
// so the binary's size sets most of an execution's cost.
package fuzz
