package cluster

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// dumpObject is one object of a dump and where it was: "document 3" or
// "document 1, items[41]".
type dumpObject struct {
	obj   map[string]any
	place string
}

// eachObject calls fn for every object of a dump, list items one by one. A
// JSON dump (kubectl get -o json: one List) is streamed: each item is
// decoded on its own and dropped after fn, so a large List never sits in
// memory whole. YAML documents are decoded one at a time.
func eachObject(r io.Reader, fn func(dumpObject) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	first, err := firstByte(br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	if first == '{' || first == '[' {
		return eachJSON(br, fn)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(br, 1<<16)
	for n := 1; ; n++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("document %d: %w", n, err)
		}
		if m == nil {
			continue
		}
		place := fmt.Sprintf("document %d", n)
		items, isList := m["items"]
		if !isList || !listKind(m) {
			if err := fn(dumpObject{m, place}); err != nil {
				return err
			}
			continue
		}
		arr, ok := items.([]any)
		if !ok && items != nil {
			return fmt.Errorf("%s: items is %s, not a list", place, typeName(items))
		}
		for i, it := range arr {
			om, ok := it.(map[string]any)
			if !ok {
				return fmt.Errorf("%s, items[%d]: %s, not an object", place, i, typeName(it))
			}
			if err := fn(dumpObject{om, fmt.Sprintf("%s, items[%d]", place, i)}); err != nil {
				return err
			}
			arr[i] = nil
		}
	}
}

// listKind: a List (kind List or <Kind>List) holding items.
func listKind(m map[string]any) bool {
	k, _ := m["kind"].(string)
	return k == "" || strings.HasSuffix(k, "List")
}

func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		case 0xEF: // UTF-8 byte order mark
			if next, _ := br.Peek(2); bytes.Equal(next, []byte{0xBB, 0xBF}) {
				_, _ = br.Discard(2)
				continue
			}
		}
		return b, br.UnreadByte()
	}
}

// eachJSON streams concatenated JSON values: objects, whose "items" array
// (a List's) is decoded element by element, and arrays of objects.
func eachJSON(r io.Reader, fn func(dumpObject) error) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	for n := 1; ; n++ {
		place := fmt.Sprintf("document %d", n)
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", place, err)
		}
		switch tok {
		case json.Delim('['):
			if err := jsonItems(dec, place, "", fn); err != nil {
				return err
			}
			continue
		case json.Delim('{'):
		default:
			return fmt.Errorf("%s: %v is not an object", place, tok)
		}
		head := map[string]any{}
		streamed := false
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return fmt.Errorf("%s: %w", place, err)
			}
			key, _ := kt.(string)
			if key == "items" {
				vt, err := dec.Token()
				if err != nil {
					return fmt.Errorf("%s: items: %w", place, err)
				}
				if vt == nil {
					streamed = true
					continue
				}
				if vt != json.Delim('[') {
					return fmt.Errorf("%s: items is %v, not a list", place, vt)
				}
				if err := jsonItems(dec, place, "items", fn); err != nil {
					return err
				}
				streamed = true
				continue
			}
			var v any
			if err := dec.Decode(&v); err != nil {
				return fmt.Errorf("%s: %s: %w", place, key, err)
			}
			head[key] = v
		}
		if _, err := dec.Token(); err != nil { // '}'
			return fmt.Errorf("%s: %w", place, err)
		}
		if streamed && listKind(head) {
			continue
		}
		if streamed {
			return fmt.Errorf("%s: a %v with items is not a List", place, head["kind"])
		}
		if err := fn(dumpObject{numbersToGo(head).(map[string]any), place}); err != nil {
			return err
		}
	}
}

// jsonItems decodes the elements of an array whose '[' was read, up to and
// including its ']'.
func jsonItems(dec *json.Decoder, place, field string, fn func(dumpObject) error) error {
	for i := 0; dec.More(); i++ {
		at := fmt.Sprintf("%s, %s[%d]", place, field, i)
		if field == "" {
			at = fmt.Sprintf("%s, [%d]", place, i)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %s, not an object", at, typeName(v))
		}
		if err := fn(dumpObject{numbersToGo(m).(map[string]any), at}); err != nil {
			return err
		}
	}
	_, err := dec.Token() // ']'
	return err
}

// numbersToGo turns json.Numbers into int64 or float64, as the YAML
// decoder (and the unstructured converter) expect.
func numbersToGo(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = numbersToGo(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbersToGo(e)
		}
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	}
	return v
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a number"
}

// dedup remembers each object a dump holds by kind, namespace and name: a
// dump assembled from several kubectl runs, or a List and a file repeating
// one of its items, holds objects twice. A repeat equal to the first (but
// for resourceVersion, managedFields and the status, which change between
// two reads; a node's allocatable and capacity are compared) is dropped; a different one is an error naming both
// places.
type dedup struct {
	seen map[string]seenObject
}

type seenObject struct {
	place string
	sum   [32]byte
}

// first reports whether the object is new; a conflicting repeat is an error.
func (d *dedup) first(o dumpObject, apiVersion, kind, ns, name string) (bool, error) {
	if name == "" {
		return true, nil
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	key := group + "/" + kind + "/" + ns + "/" + name
	sum := fingerprint(o.obj)
	if d.seen == nil {
		d.seen = map[string]seenObject{}
	}
	prev, ok := d.seen[key]
	if !ok {
		d.seen[key] = seenObject{o.place, sum}
		return true, nil
	}
	if prev.sum == sum {
		return false, nil
	}
	id := name
	if ns != "" {
		id = ns + "/" + name
	}
	return false, fmt.Errorf("%s %s is in the dump twice and the copies differ: %s and %s; keep one (e.g. dump the cluster once)", kind, id, prev.place, o.place)
}

func fingerprint(m map[string]any) [32]byte {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		md2 := make(map[string]any, len(md))
		for k, v := range md {
			if k != "resourceVersion" && k != "managedFields" {
				md2[k] = v
			}
		}
		c["metadata"] = md2
	}
	if st, ok := m["status"].(map[string]any); ok {
		st2 := make(map[string]any, len(st))
		for k, v := range st {
			if k == "allocatable" || k == "capacity" {
				st2[k] = v
			}
		}
		c["status"] = st2
	}
	b, _ := json.Marshal(c)
	return sha256.Sum256(b)
}
