// Package goreleaser holds the check of kubedra's .goreleaser.yaml with
// GoReleaser's own configuration package (see goreleaser_test.go).
package goreleaser
