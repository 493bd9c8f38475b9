//go:build ignore

// fmt_gen prints golden outputs of fmt.Sprintf over template-typed values as JSON lines:
// go run fmt_gen.go emit.go > fmt.jsonl
package main

import (
	"fmt"
	"math"
	"strconv"
)

// arg is how a record names one argument: its Go type and its value as text
// (floats as their IEEE-754 bits in hex, so that the reader gets them exactly).
func arg(value any) map[string]string {
	switch v := value.(type) {
	case int:
		return map[string]string{"t": "int", "v": strconv.Itoa(v)}
	case float64:
		return map[string]string{"t": "float64", "v": strconv.FormatUint(math.Float64bits(v), 16)}
	case string:
		return map[string]string{"t": "string", "v": v}
	case bool:
		return map[string]string{"t": "bool", "v": strconv.FormatBool(v)}
	}
	panic(value)
}

func emitSprintf(format string, args ...any) {
	described := []map[string]string{}
	for _, a := range args {
		described = append(described, arg(a))
	}
	emit(map[string]any{"fn": "Sprintf", "format": format, "args": described, "out": fmt.Sprintf(format, args...)})
}

var ints = []any{0, 1, -1, 7, 42, -42, 255, 65, 0x1F600, 0xD800, 0x110000, 1 << 31, math.MaxInt64, math.MinInt64}
var floats = []any{0.0, math.Copysign(0, -1), 1.0, -1.5, 3.14159, 2.5, 0.1, 1e6, 1e21, 1e-7, 123456.789,
	-0.000123, 1e100, 99.995, math.NaN(), math.Inf(1), math.Inf(-1)}
var strs = []any{"", "abc", "héllo", `a"b`, "tab\there", "日本語", "<&>", "\x00\x7f", "😀", "\u2028", "`x`"}
var bools = []any{true, false}

var intVerbs = []string{"%d", "%5d", "%-5d|", "%05d", "%+d", "% d", "%x", "%X", "%#x", "%#X", "%08x", "%o",
	"%#o", "%O", "%b", "%#b", "%c", "%q", "%+q", "%U", "%#U", "%v", "%+v", "%8.3d", "%.0d", "%-+7d|",
	"%x", "% x", "%e", "%f", "%s", "%t", "%10.4v", "%010d", "%-010d|", "%#v", "%T"}
var floatVerbs = []string{"%f", "%.2f", "%8.3f", "%-8.3f|", "%08.3f", "%+.1f", "% f", "%e", "%E", "%.3e",
	"%g", "%G", "%.3g", "%#g", "%#.3g", "%v", "%+v", "%10v", "%-10v|", "%.0f", "%.10f", "%5.1e", "%F",
	"%x", "%X", "%b", "%d", "%s", "%q", "%010.2f", "%+010.2f", "% 010.2f", "%#v", "%T", "%.1g", "%.20g"}
var stringVerbs = []string{"%s", "%10s", "%-10s|", "%.2s", "%q", "%#q", "%+q", "%x", "%X", "% x", "% X",
	"%#x", "%v", "%5.1s", "%d", "%010s", "%-010s|", "%.0s", "%#v", "%T", "%c", "%.3q", "%8q"}
var boolVerbs = []string{"%t", "%v", "%5t", "%-6t|", "%d", "%s", "%q", "%#v", "%T"}

func main() {
	groups := []struct {
		values []any
		verbs  []string
	}{{ints, intVerbs}, {floats, floatVerbs}, {strs, stringVerbs}, {bools, boolVerbs}}
	for _, group := range groups {
		for _, verb := range group.verbs {
			for _, value := range group.values {
				emitSprintf(verb, value)
			}
		}
	}
	emitSprintf("%d %s", 1, "a")
	emitSprintf("%d %d", 1)
	emitSprintf("%d", 1, 2)
	emitSprintf("%d", 1, "x", 2.5, true)
	emitSprintf("%s")
	emitSprintf("no verbs", 1)
	emitSprintf("%[2]d %[1]d", 1, 2)
	emitSprintf("%[3]d", 1, 2)
	emitSprintf("%[2]d %d", 1, 2, 3)
	emitSprintf("%[0]d", 1)
	emitSprintf("%[x]d", 1)
	emitSprintf("%*d|", 5, 3)
	emitSprintf("%-*d|", 5, 3)
	emitSprintf("%*d|", -5, 3)
	emitSprintf("%.*f", 2, 3.14159)
	emitSprintf("%*d", "x", 3)
	emitSprintf("%.*d", 1.5, 3)
	emitSprintf("%!")
	emitSprintf("%", 1)
	emitSprintf("%z", 1)
	emitSprintf("%%d %%", 1)
	emitSprintf("%5%")
	emitSprintf("%v %v %v %v", 1, 2.5, "s", true)
	emitSprintf("%[1]d %[1]x %[1]o", 64)
	emitSprintf("%3c|%-3c|", 65, 66)
	emitSprintf("%.3x", "abcdef")
	emitSprintf("%08.3f|%-08.3f|", -3.14159, -3.14159)
	emitSprintf("%+q", "héllo")
	emitSprintf("%#+q", "héllo")
	emitSprintf("%x", -255)
	emitSprintf("%#08x", 255)
	emitSprintf("%+.3e", 12345.678)
	emitSprintf("%6.2f%%", 99.5)
}
