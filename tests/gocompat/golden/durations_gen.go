//go:build ignore

// durations_gen prints golden outputs of time.ParseDuration and Duration.String as JSON
// lines: go run durations_gen.go emit.go > durations.jsonl
package main

import (
	"math"
	"math/rand"
	"strconv"
	"time"
)

var texts = []string{
	"0", "+0", "-0", "0s", "1s", "-1s", "+1s", "1.5h", "1h30m", "1h30m45s", "300ms", "-300ms", "1us", "1µs",
	"1μs", "1ns", "1.000000001s", "1.0000000001s", ".5s", "5.s", ".s", "1", "s", "", "1x", "1d", "1w",
	"1y", "1S", "1H", "1h-1m", "1h 1m", " 1h", "1h ", "2562047h47m16.854775807s", "2562047h47m16.854775808s",
	"-2562047h47m16.854775808s", "-2562047h47m16.854775809s", "9223372036854775807ns", "9223372036854775808ns",
	"-9223372036854775808ns", "18446744073709551616ns", "0.1ns", "0.9ns", "1.9999999999ns", "1e3s", "1_000s",
	"0x10s", "1.5.5s", "3m0.5s", "1h1h", "1m60s", "100000h", "2562048h", "1.0000000000000000001h",
	"0.000000000000000000001h", "12345678901234567890.5ns", "-", "+", "--1s", "1mm", "1ms1us1ns",
	"1.123456789123456789s", "59m59.999999999s", "5m ", "6h5m4s3ms2us1ns",
}

func main() {
	for _, text := range texts {
		d, err := time.ParseDuration(text)
		if err != nil {
			emit(map[string]any{"fn": "ParseDuration", "in": text, "err": err.Error()})
		} else {
			emit(map[string]any{"fn": "ParseDuration", "in": text, "out": strconv.FormatInt(int64(d), 10)})
		}
	}
	values := []int64{0, 1, -1, 999, 1000, 1001, 1500, 999999, 1000000, 1500000, 999999999, 1000000000,
		1000000001, 1500000000, 59999999999, 60000000000, 61500000000, 3599999999999, 3600000000000,
		3661000000001, 86400000000000, 90061001001001, math.MaxInt64, math.MinInt64, math.MinInt64 + 1,
		-1500000000, -3600000000000, 100 * 3600000000000}
	random := rand.New(rand.NewSource(7))
	for i := 0; i < 60; i++ {
		values = append(values, random.Int63n(int64(math.Pow10(1+i%18)))*int64(1-2*(i%2)))
	}
	for _, ns := range values {
		emit(map[string]any{"fn": "Duration.String", "in": strconv.FormatInt(ns, 10), "out": time.Duration(ns).String()})
	}
}
