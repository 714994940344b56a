package detect

import (
	"bytes"
	"strings"
)

// IsExtendedResource reports whether a resource name is an extended
// resource that detection reports: a domain-prefixed name (domain/name)
// whose domain is not kubernetes.io or a subdomain of it. The KEP-5004
// implicit names deviceclass.resource.kubernetes.io/<class> are reported
// too: they are device requests already served by DRA. Names that the API
// server would reject (bad characters, several slashes) are not reported.
func IsExtendedResource(name string) bool {
	domain, rest, ok := strings.Cut(name, "/")
	if !ok || domain == "" || rest == "" {
		return false
	}
	for i := 0; i < len(domain); i++ {
		if !domainChar(domain[i]) {
			return false
		}
	}
	for i := 0; i < len(rest); i++ {
		if !nameChar(rest[i]) {
			return false
		}
	}
	return !nativeDomain(domain)
}

// DRABackedPrefix is the prefix of KEP-5004 implicit extended-resource names.
const DRABackedPrefix = "deviceclass.resource.kubernetes.io/"

func nativeDomain(domain string) bool {
	d := strings.ToLower(domain)
	if d == "deviceclass.resource.kubernetes.io" {
		return false
	}
	return d == "kubernetes.io" || strings.HasSuffix(d, ".kubernetes.io")
}

func domainChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}

func nameChar(c byte) bool { return domainChar(c) || c == '_' }

// MayRequest reports whether a document's text can hold a device request.
// It is a necessary condition, never a sufficient one: when it returns
// false, Documents finds nothing in that document. Detection reports a
// request only for a mapping key that IsExtendedResource, under a `limits`
// or `requests` key (or a Spark gpu field, whose name is a value). So a
// document with a request must contain:
//   - the text "limits" or "requests", or "Spark";
//   - a name domain/name, written as a key: at the start of a token
//     (after a blank, '{', '[', ',' or a quote) and followed, after an
//     optional closing quote and blanks, by ':' (and a blank, unless the
//     key was quoted: JSON) or by ',' or '}' (a flow key without a value).
//
// The name comes after the first "limits" or "requests" in the text,
// since a mapping's values follow its keys.
//
// Text can hide either through escapes in double-quoted scalars (\/, \x,
// \u, \U, an escaped line break), through an alias used as a key (which
// needs an anchor in the same document), or through an explicit key
// ("? key"); when any of those appears, MayRequest returns true.
func MayRequest(doc []byte) bool {
	if hidesText(doc) {
		return true
	}
	if bytes.Contains(doc, []byte("Spark")) {
		return true
	}
	// A request key is nested under a limits or requests key, so its text
	// comes after the first of them.
	first := firstListKey(doc)
	if first < 0 {
		return false
	}
	for off := first; ; {
		i := bytes.IndexByte(doc[off:], '/')
		if i < 0 {
			return false
		}
		slash := off + i
		off = slash + 1
		if requestKeyAt(doc, slash) {
			return true
		}
	}
}

// firstListKey is the offset of the first "limits" or "requests" in doc,
// or -1.
func firstListKey(doc []byte) int {
	first := bytes.Index(doc, []byte("limits"))
	if i := bytes.Index(doc, []byte("requests")); i >= 0 && (first < 0 || i < first) {
		first = i
	}
	return first
}

// requestKeyAt reports whether the '/' at doc[slash] is in the text of a
// key that can be an extended resource: a domain that is not native and
// starts a token, a name, then the end of a key.
func requestKeyAt(doc []byte, slash int) bool {
	start := slash
	for start > 0 && domainChar(doc[start-1]) {
		start--
	}
	if start == slash || start > 0 && !keyStart(doc[start-1]) {
		return false
	}
	end := slash + 1
	for end < len(doc) && nameChar(doc[end]) {
		end++
	}
	if end == slash+1 {
		return false
	}
	if nativeDomain(string(doc[start:slash])) {
		return false
	}
	return keyEnd(doc, end)
}

// keyEnd reports whether the name that ends before doc[end] is written as a
// mapping key: after an optional closing quote and blanks, ':' (and a
// blank, unless the key was quoted: JSON) or ',' or '}' (a flow key
// without a value).
func keyEnd(doc []byte, end int) bool {
	j := end
	quoted := j < len(doc) && (doc[j] == '"' || doc[j] == '\'')
	if quoted {
		j++
	}
	for j < len(doc) && (doc[j] == ' ' || doc[j] == '\t') {
		j++
	}
	if j == len(doc) {
		return false
	}
	switch doc[j] {
	case ',', '}':
		return true
	case ':':
		// A plain key needs a blank after ':' (nvidia/cuda:12 is a
		// value); a quoted (JSON-like) key does not.
		return quoted || j+1 == len(doc) || blank(doc[j+1])
	}
	return false
}

// hidesText reports whether doc uses YAML features through which a key's
// text may not appear literally next to its ':'.
func hidesText(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			if i+1 < len(doc) {
				switch doc[i+1] {
				case '/', 'x', 'u', 'U', '\n', '\r':
					return true
				}
			}
		case '&':
			// An anchor: '&' starting a token, followed by a name.
			// Shell's "a && b" is not one.
			if i+1 < len(doc) && doc[i+1] != '&' && anchorChar(doc[i+1]) && (i == 0 || tokenStart(doc[i-1])) {
				return true
			}
		case '?':
			// An explicit key: '?' starting a token, followed by a blank.
			if (i+1 == len(doc) || doc[i+1] == ' ' || doc[i+1] == '\t' || doc[i+1] == '\n' || doc[i+1] == '\r') &&
				(i == 0 || tokenStart(doc[i-1])) {
				return true
			}
		}
	}
	return false
}

// keyStart reports whether c can precede a mapping key's first character.
func keyStart(c byte) bool {
	return blank(c) || c == '{' || c == '[' || c == ',' || c == '"' || c == '\''
}

func blank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func tokenStart(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '[' || c == '{' || c == ','
}

func anchorChar(c byte) bool {
	return c > ' ' && c < 0x7f && c != ',' && c != '[' && c != ']' && c != '{' && c != '}' || c >= 0x80
}
