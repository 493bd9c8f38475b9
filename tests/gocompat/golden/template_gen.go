//go:build ignore

// template_gen prints golden outputs of text/template as Loki runs it (options
// missingkey=zero, labels as map[string]string, templates named "line" or "label") as
// JSON lines: go run template_gen.go emit.go > template.jsonl
//
// Loki's own and sprig's functions are registered under their names, so that parsing
// sees the same function table; only those that wrap Go's strings package do real work,
// the others fail if called, so the execution cases leave them out.
package main

import (
	"errors"
	"strings"
	"text/template"
)

var stubs = []string{
	"__line__", "__timestamp__", "add", "addf", "alignLeft", "alignRight", "b64dec", "b64enc", "bytes",
	"ceil", "contains", "count", "date", "default", "div", "divf", "duration", "duration_seconds",
	"float64", "floor", "fromJson", "hasPrefix", "hasSuffix", "indent", "int", "lower", "max", "maxf",
	"min", "minf", "mod", "mul", "mulf", "nindent", "now", "regexReplaceAll", "regexReplaceAllLiteral",
	"repeat", "replace", "round", "sub", "subf", "substr", "title", "toDate", "toDateInZone", "trim",
	"trimAll", "trimPrefix", "trimSuffix", "trunc", "unixEpoch", "unixEpochMillis", "unixEpochNanos",
	"unixToTime", "upper", "urldecode", "urlencode",
}

func functions() template.FuncMap {
	funcs := template.FuncMap{}
	for _, name := range stubs {
		funcs[name] = func(...any) (string, error) { return "", errors.New("not in the generator") }
	}
	funcs["ToLower"] = strings.ToLower
	funcs["ToUpper"] = strings.ToUpper
	funcs["Replace"] = strings.Replace
	funcs["Trim"] = strings.Trim
	funcs["TrimLeft"] = strings.TrimLeft
	funcs["TrimRight"] = strings.TrimRight
	funcs["TrimPrefix"] = strings.TrimPrefix
	funcs["TrimSuffix"] = strings.TrimSuffix
	funcs["TrimSpace"] = strings.TrimSpace
	return funcs
}

var labels = map[string]string{
	"a": "x", "b": "<b>&'\"", "n": "42", "f": "1.5", "neg": "-3", "empty": "", "word": "héllo wörld",
	"spaces": "  padded  ", "multi": "line1\nline2",
}

var templates = []string{
	// parse errors
	"{{", "}}", "{{.a}", "{{.a", "{{end}}", "{{else}}", "{{if .a}}", "{{if}}", "{{range}}", "{{with}}",
	"{{define}}", `{{define "x"}}`, "{{template}}", "{{template .a}}", `{{block "b" .}}x`, "{{|}}",
	"{{.a | }}", "{{$x}}", "{{$x = 1}}", "{{break}}", "{{continue}}", "{{(.a}}", "{{.a)}}", "{{()}}",
	"{{/* unclosed", "{{/* c */ .a}}", "{{ /* c */ }}", "{{-3}}", "{{- 3}}", "{{3 -}}", "{{ 'ab' }}",
	"{{ '' }}", `{{ "unterminated }}`, "{{ `raw }}", "{{ 1__0 }}", "{{ 1e400 }}", "{{ 0x }}", "{{ .a.b. }}",
	"{{ ..a }}", "{{ f }}", "{{ .a | f }}", "{{ nil | print }}", "{{ 1 | 2 }}", "{{ .a | 1 }}",
	"{{ if .a }}{{ else }}{{ else }}{{ end }}", "{{ range .a }}{{ else if .b }}{{ end }}",
	"{{ $x := 1 }}{{ $x := 2 }}{{ $x }}", "{{ $x, $y := 1 }}", "{{ range $x, $y, $z := .a }}{{ end }}",
	"{{ with $x := .a }}{{ end }}{{ $x }}", "a\n{{ .a }}\nb\n{{ if }}", "{{ printf \"%d\" (1 2) }}",
	"{{ .a 1 }}", "{{ $.a.b }}", "{{ $ }}", "{{ .A.b.c }}", "{{ true.a }}", "{{ 1.a }}", "{{ \"s\".a }}",
	// execution
	"plain text", "", "{{ .a }}", "{{ .missing }}", "{{ .a }}-{{ .b }}", "{{.}}", "{{ $ }}", "{{ .a.b }}",
	"{{ .empty }}|", "{{ 3 }} {{ -3 }} {{ +3 }} {{ 1.5 }} {{ 1e3 }} {{ 0x1F }} {{ 0o17 }} {{ 0b11 }}",
	"{{ 1_000.5 }} {{ 1_000 }} {{ 0x1p-2 }} {{ 'a' }} {{ '\\n' }} {{ 1i }} {{ 2.5i }}",
	"{{ 9223372036854775807 }} {{ 9223372036854775808 }} {{ 18446744073709551616 }} {{ -9223372036854775808 }}",
	"{{ true }} {{ false }} {{ nil }}", "{{ \"a\\tb\" }} {{ `a\\tb` }}", "{{- .a -}} {{- .b }}",
	"a  {{- .a -}}  b", "{{ /* comment */ -}}  x", "{{ print }}|{{ print 1 2 }}|{{ print \"a\" \"b\" }}|{{ print 1 \"a\" 2 }}",
	"{{ println .a 1 }}", "{{ printf \"%05.1f|%x|%q|%v|%T\" 3.14159 255 .b .n .n }}", "{{ printf \"%d\" .n }}",
	"{{ printf }}", "{{ printf \"%s %s\" .a }}", "{{ html .b }}", "{{ js .b }}", "{{ js .word }}", "{{ urlquery .b .word }}",
	"{{ html 1 .a nil }}", "{{ len .word }}", "{{ len 3 }}", "{{ index .word 1 }}", "{{ index .a 5 }}",
	"{{ index . \"a\" }}", "{{ index . \"missing\" }}|", "{{ slice .word 1 3 }}", "{{ slice .word 3 1 }}",
	"{{ slice .a }}", "{{ not .a }} {{ not .empty }} {{ not 0 }} {{ not nil }}",
	"{{ and .a .empty .b }}|{{ or .empty .a }}|{{ and }}", "{{ or .empty 0 }}|{{ and 1 2 }}",
	"{{ eq .a \"x\" }} {{ eq .a \"y\" \"x\" }} {{ ne .a \"x\" }} {{ eq 1 1 }} {{ eq 1 2 3 1 }}",
	"{{ eq 1 1.0 }}", "{{ eq .a 1 }}", "{{ lt .a \"y\" }} {{ le 2 2 }} {{ gt 2.5 1.5 }} {{ ge \"b\" \"a\" }}",
	"{{ lt 1 2.0 }}", "{{ lt true false }}", "{{ eq nil nil }}", "{{ eq .missing \"\" }}",
	"{{ if .a }}yes{{ else }}no{{ end }}", "{{ if .empty }}yes{{ else if .a }}elif{{ end }}",
	"{{ if and .a (eq .n \"42\") }}both{{ end }}", "{{ with .a }}[{{ . }}]{{ end }}",
	"{{ with .empty }}x{{ else }}y{{ end }}", "{{ with .empty }}x{{ else with .a }}{{ . }}{{ end }}",
	"{{ range .a }}{{ . }}{{ end }}", "{{ range 3 }}{{ . }}{{ end }}", "{{ range $i, $c := 3 }}{{ $i }}{{ end }}",
	"{{ range . }}{{ . }},{{ end }}", "{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}",
	"{{ range $k, $v := . }}{{ if eq $k \"b\" }}{{ break }}{{ end }}{{ $k }};{{ end }}",
	"{{ range $k, $v := . }}{{ if eq $k \"b\" }}{{ continue }}{{ end }}{{ $k }};{{ end }}",
	"{{ range .empty }}x{{ else }}none{{ end }}", "{{ $x := .a }}{{ $x }}{{ $x = \"z\" }}{{ $x }}",
	"{{ with $x := .n }}{{ $x }}{{ end }}", "{{ $ := 1 }}", "{{ define \"T\" }}<{{ . }}>{{ end }}{{ template \"T\" .a }}",
	"{{ template \"T\" }}", "{{ block \"B\" .n }}[{{ . }}]{{ end }}", "{{ .a | printf \"%s!\" }}",
	"{{ .a | printf \"%s %s\" .b }}", "{{ \"x\" | eq .a }}", "{{ (print .a) }}{{ (print .a).b }}",
	"{{ ToUpper .word }} {{ ToLower \"ABC\" }} {{ TrimSpace .spaces }}| {{ Trim .spaces \" \" }}|",
	"{{ Replace .word \"l\" \"L\" 2 }} {{ TrimPrefix .word \"hé\" }} {{ TrimSuffix .word \"ld\" }}",
	"{{ TrimLeft .spaces \" pa\" }}|{{ TrimRight .spaces \" d\" }}|", "{{ .word | ToUpper | printf \"%q\" }}",
	"{{ ToUpper 1 }}", "{{ ToUpper }}", "{{ ToUpper .a .b }}", "{{ .multi }}", "{{ call .a }}", "{{ call nil }}",
	"{{ nil }}", "{{ .a | nil }}", "{{ printf \"%v\" nil }}", "{{ print nil }}", "{{ index nil 1 }}",
	"{{ len nil }}", "{{ 1.a }}", "{{ .n.x }}", "{{ $.a }}", "{{ printf \"%6.2f%%\" 99.5 }}",
	"{{ printf \"%s\" (index . \"word\") }}", "{{ len . }}", "{{ slice . 1 }}",
}

func main() {
	emit(map[string]any{"fn": "Functions", "stubs": stubs, "labels": labels})
	for _, name := range []string{"line", "label"} {
		for _, text := range templates {
			record := map[string]any{"fn": "Template", "name": name, "text": text}
			tmpl, err := template.New(name).Option("missingkey=zero").Funcs(functions()).Parse(text)
			if err != nil {
				record["parse_error"] = err.Error()
			} else {
				var buf strings.Builder
				if err := tmpl.Execute(&buf, labels); err != nil {
					record["exec_error"] = err.Error()
				} else {
					record["out"] = buf.String()
				}
			}
			emit(record)
		}
	}
}
