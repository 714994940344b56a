package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Name lengths of the Kubernetes API (RFC 1123).
const (
	MaxLabelLength     = 63
	MaxSubdomainLength = 253
)

// DNSLabel makes s a DNS label (lower-case letters, digits and '-', at most
// 63 characters), as claim, request and constraint names must be; an empty
// result becomes fallback.
func DNSLabel(s, fallback string) string { return dnsName(s, MaxLabelLength, false, fallback) }

// DNSSubdomain makes s a DNS subdomain of at most max characters (labels
// joined by dots), as object names must be; an empty result becomes
// fallback.
func DNSSubdomain(s string, max int, fallback string) string { return dnsName(s, max, true, fallback) }

// dnsName is kubedra's one name sanitiser: it lower-cases s, replaces runs
// of what a name cannot hold with one '-', keeps dots only where a subdomain
// may have them (never next to another dot or a dash, nor at either end),
// and shortens a name longer than max with a hash of s, so that distinct
// inputs stay distinct.
func dnsName(s string, max int, dots bool, fallback string) string {
	var b strings.Builder
	invalid := false // in a run of replaced characters
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.' && dots:
			b.WriteRune(r)
			invalid = false
		case !invalid:
			b.WriteByte('-')
			invalid = true
		}
	}
	n := b.String()
	if dots {
		for strings.Contains(n, "..") || strings.Contains(n, "-.") || strings.Contains(n, ".-") {
			n = strings.NewReplacer("..", ".", "-.", "-", ".-", "-").Replace(n)
		}
	}
	n = strings.Trim(n, "-.")
	if n == "" {
		n = fallback
	}
	if len(n) > max {
		h := sha256.Sum256([]byte(s))
		n = strings.TrimRight(n[:max-9], "-.") + "-" + hex.EncodeToString(h[:4])
	}
	return n
}
