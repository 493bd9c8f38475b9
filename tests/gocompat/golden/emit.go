//go:build ignore

// emit.go is shared by every generator: go run <name>_gen.go emit.go > <name>.jsonl
package main

import (
	"encoding/json"
	"os"
)

var out = json.NewEncoder(os.Stdout)

// emit prints one record as a JSON line.
func emit(record any) {
	if err := out.Encode(record); err != nil {
		panic(err)
	}
}
