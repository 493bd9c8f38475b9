//go:build ignore

// jsonesc_gen prints how encoding/json writes strings (json.Marshal, HTML-safe) as JSON
// lines, each input as hex bytes since some are not UTF-8: go run jsonesc_gen.go emit.go > jsonesc.jsonl
// (Go 1.26, Loki's: a release whose encoder is v2 underneath writes invalid bytes as a
// raw U+FFFD, not as the escape \ufffd).
package main

import (
	"encoding/hex"
	"encoding/json"
)

var inputs = []string{
	"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "\u2028\u2029", "\u2027\u202a",
	"\b\f\n\r\t", "\x00\x01\x1f", "\x7f", "é日本😀", "\ufffd", "\ufeff", "\u00a0\u00ad",
	"\xff", "\xc3", "\xc3\x28", "\xe2\x80", "\xe2\x80\xa8x", "\xed\xa0\x80", "\xf0\x9f\x98",
	"\xf4\x90\x80\x80", "a\xffb\xfec", "\xc0\xaf", "/ slash", "'single'", "`back`", "+=-",
	"mixed <\u2028> \xff é \t",
}

func main() {
	for _, text := range inputs {
		encoded, err := json.Marshal(text)
		if err != nil {
			panic(err)
		}
		emit(map[string]string{"fn": "Marshal", "in": hex.EncodeToString([]byte(text)), "out": string(encoded)})
	}
}
