// Package fuzz holds FuzzRewrite, the migrate pipeline fuzzed in memory
// (fuzz_test.go). It is a package of its own so that its test binary links
// only the pipeline (files, detect, plan, rewrite) and not what the other
// rewrite tests run (action, and with it the Helm SDK and client-go): Go's
// fuzzer sends the binary's whole coverage map to its worker at every
// round trip, and that map grows with every package linked (1,095 packages
// and about 60 ms a round trip in the rewrite test binary).
package fuzz
