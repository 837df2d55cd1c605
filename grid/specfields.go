package grid

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"gekc/internal/editdist"
)

// specField describes one TOML key of RunSpec, found from the struct tags so
// that adding a field to RunSpec makes it a grid key with no other change.
type specField struct {
	key   string // dotted path, e.g. "eval.hits"
	index []int  // for reflect.Value.FieldByIndex
	typ   reflect.Type
	order int // expansion order; see specFields
}

func (f specField) isTable() bool { return f.typ.Kind() == reflect.Struct }
func (f specField) isList() bool  { return f.typ.Kind() == reflect.Slice }

// specFields lists every key, tables before their members, in struct order
// except that seed comes last: axes later in this order vary faster, so the
// seeds of one configuration are neighbours in the expansion, in -dry-run
// and in SLURM task numbers.
var specFields = buildSpecFields()

// specFieldByKey indexes specFields by dotted key.
var specFieldByKey = func() map[string]specField {
	m := make(map[string]specField, len(specFields))
	for _, f := range specFields {
		m[f.key] = f
	}
	return m
}()

func buildSpecFields() []specField {
	var fields []specField
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := strings.Split(sf.Tag.Get("toml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			idx := append(append([]int(nil), index...), i)
			f := specField{key: prefix + tag, index: idx, typ: sf.Type, order: len(fields)}
			fields = append(fields, f)
			if sf.Type.Kind() == reflect.Struct {
				walk(sf.Type, f.key+".", idx)
			}
		}
	}
	walk(reflect.TypeOf(RunSpec{}), "", nil)
	for i := range fields {
		if fields[i].key == "seed" {
			fields[i].order = len(fields)
		}
	}
	return fields
}

// childKeys lists the keys directly inside table prefix ("" = top level), in
// schema order, for error messages.
func childKeys(prefix string) []string {
	var keys []string
	for _, f := range specFields {
		rest, ok := strings.CutPrefix(f.key, prefix)
		if ok && rest != "" && !strings.Contains(rest, ".") {
			keys = append(keys, rest)
		}
	}
	return keys
}

// setField stores a decoded TOML value (string, int64, float64, []any,
// map[string]any) into field f of spec, converting and checking its type.
// A table value sets only the members it names, so a [[sweep]] block may
// change one PLL weight and keep the others.
func setField(spec *RunSpec, f specField, v any) error {
	dst := reflect.ValueOf(spec).Elem().FieldByIndex(f.index)
	if f.isTable() {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want a table, got %s", f.key, describeTOML(v))
		}
		for _, k := range sortedKeys(m) {
			sub, ok := specFieldByKey[f.key+"."+k]
			if !ok {
				return unknownKeyError(f.key+".", k)
			}
			if err := setField(spec, sub, m[k]); err != nil {
				return err
			}
		}
		return nil
	}
	converted, err := convertValue(f.typ, v)
	if err != nil {
		return fmt.Errorf("%s: %w", f.key, err)
	}
	dst.Set(converted)
	return nil
}

// convertValue converts one TOML value to Go type t.
func convertValue(t reflect.Type, v any) (reflect.Value, error) {
	switch t.Kind() {
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return reflect.Value{}, fmt.Errorf("want a string, got %s", describeTOML(v))
		}
		return reflect.ValueOf(s), nil
	case reflect.Int:
		switch x := v.(type) {
		case int64:
			return reflect.ValueOf(int(x)), nil
		case float64:
			// 1e3 is a float in TOML; accept it where it is a whole number.
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return reflect.ValueOf(int(x)), nil
			}
		}
		return reflect.Value{}, fmt.Errorf("want an integer, got %s", describeTOML(v))
	case reflect.Float64:
		switch x := v.(type) {
		case float64:
			return reflect.ValueOf(x), nil
		case int64:
			return reflect.ValueOf(float64(x)), nil
		}
		return reflect.Value{}, fmt.Errorf("want a number, got %s", describeTOML(v))
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return reflect.Value{}, fmt.Errorf("want an array, got %s", describeTOML(v))
		}
		out := reflect.MakeSlice(t, len(arr), len(arr))
		for i, e := range arr {
			ev, err := convertValue(t.Elem(), e)
			if err != nil {
				return reflect.Value{}, fmt.Errorf("element %d: %w", i, err)
			}
			out.Index(i).Set(ev)
		}
		return out, nil
	}
	return reflect.Value{}, fmt.Errorf("unsupported field type %s", t)
}

// describeTOML names a decoded value's TOML type for error messages.
func describeTOML(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("string %q", x)
	case int64:
		return fmt.Sprintf("integer %d", x)
	case float64:
		return fmt.Sprintf("float %v", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("%T", v)
}

// unknownKeyError names the key, the keys allowed there, and the closest
// one when it looks like a typo.
func unknownKeyError(prefix, key string) error {
	known := childKeys(prefix)
	if prefix == "" {
		known = append(known, "seeds")
	}
	msg := fmt.Sprintf("unknown key %q", prefix+key)
	if guess := closest(key, known); guess != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", prefix+guess)
	}
	return fmt.Errorf("%s; known keys here: %s", msg, strings.Join(known, ", "))
}

// closest returns the candidate within edit distance 2 of s, if any.
func closest(s string, candidates []string) string { return editdist.Closest(s, candidates) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
