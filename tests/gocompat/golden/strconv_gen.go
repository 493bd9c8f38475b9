//go:build ignore

// strconv_gen prints golden outputs of Go's strconv as JSON lines:
// go run strconv_gen.go emit.go > strconv.jsonl
package main

import (
	"math"
	"math/rand"
	"strconv"
)

func bits(f float64) string { return strconv.FormatUint(math.Float64bits(f), 16) }

var numberTexts = []string{
	"0", "1", "-1", "+1", "007", "08", "0x1F", "0X1f", "0o17", "0O17", "0b101", "0B11", "0x", "0b",
	"1_000", "1__000", "_1000", "1000_", "0x_1F", "0_7", "0b_1", "1_000.5", "1_000.000_5", "1_e5",
	"1e_5", "0x1p-2", "0x1.8p1", "0X_1P+3", "0x1p", "0x.8p0", "0x1.p0", "0x_p0", "0x1_p0",
	"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"18446744073709551615", "18446744073709551616", "2147483647", "2147483648", "-2147483649",
	"1.5", "-1.5", ".5", "5.", ".", "-.5", "+.5", "1e10", "1E10", "1e+10", "1e-10", "1e", "1e+", "e5",
	"1e308", "1.7976931348623157e308", "1.7976931348623159e308", "1e309", "-1e309", "4.9e-324",
	"2e-324", "1e-400", "2.2250738585072011e-308", "0.1", "0.30000000000000004", "123456789012345678901234567890",
	"inf", "Inf", "+inf", "-Inf", "infinity", "-Infinity", "INFINITY", "infin", "nan", "NaN", "NAN",
	"-nan", "+NaN", " 1", "1 ", "", "+", "-", "--1", "1.2.3", "0x1.8", "1e1.5", "١", "0.0", "-0",
	"-0.0", "00", "0.000001", "1e-7", "100000000000000000000000", "0x1fffffffffffff", "0xffffffffffffffff",
	"0x10000000000000000", "0o777", "0777", "09", "0_9", "12345678901234567890e-10",
}

func ints() {
	for _, text := range numberTexts {
		for _, size := range []int{64, 32} {
			value, err := strconv.ParseInt(text, 0, size)
			if err != nil {
				emit(map[string]any{"fn": "ParseInt", "in": text, "bits": size, "err": err.Error()})
			} else {
				emit(map[string]any{"fn": "ParseInt", "in": text, "bits": size, "out": strconv.FormatInt(value, 10)})
			}
		}
	}
}

func floats() {
	for _, text := range numberTexts {
		value, err := strconv.ParseFloat(text, 64)
		if err != nil {
			emit(map[string]any{"fn": "ParseFloat", "in": text, "err": err.Error()})
		} else {
			emit(map[string]any{"fn": "ParseFloat", "in": text, "out": bits(value)})
		}
	}
}

func formatValues() []float64 {
	values := []float64{
		0, math.Copysign(0, -1), 1, -1, 0.5, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 1.5, 2.5, -2.5, 0.05, 0.15,
		0.25, 0.35, 1e-5, 1e-4, 1.234e-4, 0.001, 123456, 1234567, 999999, 999999.5, 1e6, 1e20, 1e21,
		1e22, 1e100, 1.7976931348623157e308, 5e-324, 2.2250738585072014e-308, 123.456, -123.456,
		9.995, 99.95, 0.0001234, 12345.678, 3.14159265358979, 2.718281828459045, 100, 1e15, 1e16,
		1e17, 123456789012345678, 0.000001, 0.0000001, math.Inf(1), math.Inf(-1), math.NaN(),
	}
	random := rand.New(rand.NewSource(20240501))
	for i := 0; i < 150; i++ {
		exp := random.Intn(40) - 20
		values = append(values, (random.Float64()-0.5)*math.Pow(10, float64(exp)))
	}
	for i := 0; i < 40; i++ {
		values = append(values, math.Float64frombits(random.Uint64()))
	}
	return values
}

var formatPrecisions = []int{-1, 0, 1, 2, 3, 5, 10, 17, 20}

// formats prints one record per value: "out" maps "<verb><prec>" to FormatFloat's text.
func formats() {
	for _, value := range formatValues() {
		texts := map[string]string{}
		for _, verb := range []byte("eEfgGbxX") {
			for _, prec := range formatPrecisions {
				texts[string(verb)+strconv.Itoa(prec)] = strconv.FormatFloat(value, verb, prec, 64)
			}
		}
		emit(map[string]any{"fn": "FormatFloat", "in": bits(value), "out": texts})
	}
}

var quoteTexts = []string{
	"", "plain", `a"b`, `a\b`, "a'b", "tab\there", "nl\nx", "cr\rx", "\a\b\f\v", "\x00\x01\x1f\x7f",
	"é", "日本語", "😀", "\u00a0", "\u00ad", "\u200b", "\u2028", "\u2029", "\ufeff", "\ufffd",
	"\u0300", "a\u0301", "\U0001F600x", "\U000E0001", "\U0010FFFF", "\u0378", "\u061c", "\u3000",
	"\u2000", "\u1680", "\u0085", "\u00ff", "\u0100", "`raw`", "<&>", "mixé\t\u2028😀",
}

func quotes() {
	for _, text := range quoteTexts {
		emit(map[string]any{"fn": "Quote", "in": text, "out": strconv.Quote(text)})
		emit(map[string]any{"fn": "QuoteToASCII", "in": text, "out": strconv.QuoteToASCII(text)})
		quoted := strconv.Quote(text)
		unquoted, err := strconv.Unquote(quoted)
		if err != nil || unquoted != text {
			panic(text)
		}
	}
	for _, r := range []rune{0, 7, 'a', '\'', '"', '\\', '\n', 0x7f, 0xa0, 0xe9, 0x2028, 0xd800, 0xfffd,
		0x1f600, 0x10ffff, 0x110000, -1, 0xe0001, 0x378} {
		emit(map[string]any{"fn": "QuoteRune", "in": r, "out": strconv.QuoteRune(r)})
		emit(map[string]any{"fn": "QuoteRuneToASCII", "in": r, "out": strconv.QuoteRuneToASCII(r)})
	}
	unquotes := []string{
		`""`, `"abc"`, `"a\"b"`, `"\a\b\f\n\r\t\v\\"`, `"\x41\x7f"`, `"\101\177"`, `"\400"`, `"\u00e9"`,
		`"\U0001F600"`, `"\ud800"`, `"\U00110000"`, `"\xc3\xa9"`, `"\xff"`, `"\q"`, `"\'"`, `"'"`,
		`"a`, `a"`, "`raw\\n`", "`a\rb`", "`a`b`", `'a'`, `'\n'`, `'ab'`, `''`, `"\x4"`, `"\u12"`,
		`"\08"`, "\"a\nb\"", `"é"`, `"\t"`, `"""`, `"\"`, `"`,
	}
	for _, text := range unquotes {
		value, err := strconv.Unquote(text)
		if err != nil {
			emit(map[string]any{"fn": "Unquote", "in": text, "err": err.Error()})
		} else {
			emit(map[string]any{"fn": "Unquote", "in": text, "out": value})
		}
	}
}

func main() {
	ints()
	floats()
	formats()
	quotes()
}
