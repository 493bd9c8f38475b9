"""The Go template language: text, actions, trim markers, variables, control flow."""

from __future__ import annotations

import pytest

from tests.gocompat.template.helpers import case, check

LABELS = {
    "a": "x",
    "b": "",
    "n": "3",
    "json": '{"k":"v","list":[1,2.5,"s",null,true],"m":{"z":1,"a":{"b":"deep"}}}',
}

TEXT_AND_ACTIONS = [
    case("", ""),
    case("plain text", "plain text"),
    case("{{.a}}", "x"),
    case("{{ .a }}", "x"),
    case("[{{.missing}}]", "[]"),
    case("{{.a}}{{.a}}", "xx"),
    case("a {{- .a -}} b", "axb"),
    case("a  \n {{- .a}}", "ax"),
    case("{{.a -}}  \n\t b", "xb"),
    case("a {{- /* comment */ -}} b", "ab"),
    case("a{{/* comment */}}b", "ab"),
    case("a {{/* c */ -}} b", "a b"),
    case("{{- .a}}", "x"),
    case("{{-3}}", "-3"),
    case("{{ -3 }}", "-3"),
    case("{{.a -}}", "x"),
    case("{{\n.a\n}}", "x"),
    case('{{"str"}}', "str"),
    case("{{`raw\\n`}}", "raw\\n"),
    case('{{"tab\\tnl\\n\\x41\\u00e9\\101"}}', "tab\tnl\nAéA"),
    case("{{'a'}}", "97"),
    case("{{'\\n'}}", "10"),
    case(
        "{{1}} {{-1}} {{+1}} {{0x1F}} {{0o17}} {{017}} {{0b101}} {{1_000}}",
        "1 -1 1 31 15 15 5 1000",
    ),
    case("{{1.5}} {{1.0}} {{1e3}} {{1e21}} {{.5}} {{0x1p-2}}", "1.5 1 1000 1e+21 0.5 0.25"),
    case("{{true}} {{false}}", "true false"),
    case(
        "{{.}}",
        'map[a:x b: json:{"k":"v","list":[1,2.5,"s",null,true],"m":{"z":1,"a":{"b":"deep"}}} n:3]',
    ),
    case(
        "{{$}}",
        'map[a:x b: json:{"k":"v","list":[1,2.5,"s",null,true],"m":{"z":1,"a":{"b":"deep"}}} n:3]',
    ),
    case("{{(.a)}}", "x"),
    case('{{(printf "%s-%s" .a .a) | upper}}', "X-X"),
    case('{{.a | printf "%s!"}}', "x!"),
    case('{{"x" | printf "%s %s" "y"}}', "y x"),
    case("{{1 | print 2}}", "2 1"),
]

VARIABLES = [
    case("{{$x := .a}}{{$x}}", "x"),
    case("{{$x := 1}}{{$x = 2}}{{$x}}", "2"),
    case("{{$x := 1}}{{if true}}{{$x = 2}}{{end}}{{$x}}", "2"),
    case("{{$x := 1}}{{if true}}{{$x := 2}}{{$x}}{{end}}{{$x}}", "21"),
    case("{{$x := .a}}{{$.a}}{{$x}}", "xx"),
    case("{{$.a}}", "x"),
    case("{{with .a}}{{$.n}}{{end}}", "3"),
    case("{{$x := fromJson .json}}{{$x.k}}", "v"),
    case("{{$x := fromJson .json}}{{$x.m.a.b}}", "deep"),
    case("{{$x := fromJson .json}}{{$x.nope}}", "<no value>"),
    case(
        "{{$x := fromJson .json}}{{$x.nope.deeper}}",
        'ERR template: line:1:28: executing "line" at <$x.nope.deeper>: nil pointer evaluating interface {}.deeper',
    ),
    case('{{$x := fromJson "bad"}}{{$x}}|{{$x.a}}', "<no value>|<no value>"),
    case(
        "{{$x := fromJson .json}}{{$x.k.z}}",
        'ERR template: line:1:28: executing "line" at <$x.k.z>: can\'t evaluate field z in type string',
    ),
    case("{{$undefined}}", 'ERR template: line:1: undefined variable "$undefined"'),
    case("{{if true}}{{$x := 1}}{{end}}{{$x}}", 'ERR template: line:1: undefined variable "$x"'),
]

CONTROL = [
    case("{{if .a}}yes{{end}}", "yes"),
    case("{{if .b}}yes{{else}}no{{end}}", "no"),
    case("{{if .missing}}yes{{else}}no{{end}}", "no"),
    case("{{if .b}}1{{else if .a}}2{{else}}3{{end}}", "2"),
    case("{{if .b}}1{{else if .b}}2{{else}}3{{end}}", "3"),
    case(
        "{{if 0}}a{{else if 0.0}}b{{else if false}}c{{else if nil}}d{{else}}e{{end}}",
        'ERR template: line:1:53: executing "line" at <nil>: nil is not a command',
    ),
    case("{{if 0}}a{{else if 0.0}}b{{else if false}}c{{else}}e{{end}}", "e"),
    case("{{if and .a .n}}both{{end}}", "both"),
    case("{{if or .b .missing}}any{{else}}none{{end}}", "none"),
    case("{{if not .b}}empty{{end}}", "empty"),
    case("{{with .a}}[{{.}}]{{end}}", "[x]"),
    case("{{with .b}}[{{.}}]{{else}}none{{end}}", "none"),
    case("{{with .b}}1{{else with .a}}{{.}}{{end}}", "x"),
    case("{{with $v := .a}}{{$v}}{{.}}{{end}}", "xx"),
    case(
        "{{range $i, $v := fromJson .json | index .}}{{end}}",
        'ERR template: line:1:35: executing "line" at <index .>: error calling index: value has type map[string]interface {}; should be string',
    ),
    case('{{range (fromJson "[1,2,3]")}}{{.}},{{end}}', "1,2,3,"),
    case('{{range $i, $v := fromJson "[\\"a\\",\\"b\\"]"}}{{$i}}={{$v}};{{end}}', "0=a;1=b;"),
    case('{{range $v := fromJson "[\\"a\\",\\"b\\"]"}}{{$v}}{{end}}', "ab"),
    case('{{range $k, $v := fromJson "{\\"b\\":1,\\"a\\":2}"}}{{$k}}={{$v}};{{end}}', "a=2;b=1;"),
    case("{{range $k, $v := .}}{{$k}};{{end}}", "a;b;json;n;"),
    case('{{range fromJson "[]"}}x{{else}}empty{{end}}', "empty"),
    case('{{range fromJson "bad"}}x{{else}}none{{end}}', "none"),
    case("{{range 3}}{{.}}{{end}}", "012"),
    case("{{range $i := 2}}{{$i}}{{end}}", "01"),
    case(
        "{{range $i, $j := 2}}{{end}}",
        'ERR template: line:1:18: executing "line" at <2>: can\'t use 2 to iterate over more than one variable',
    ),
    case(
        '{{range "abc"}}{{end}}',
        'ERR template: line:1:8: executing "line" at <"abc">: range can\'t iterate over abc',
    ),
    case('{{range fromJson "[1,2,3,4]"}}{{if eq . 3.0}}{{break}}{{end}}{{.}}{{end}}', "12"),
    case('{{range fromJson "[1,2,3,4]"}}{{if eq . 2.0}}{{continue}}{{end}}{{.}}{{end}}', "134"),
    case('{{range fromJson "[[1,2],[3]]"}}{{range .}}{{.}}{{break}}{{end}};{{end}}', "1;3;"),
    case('{{range $i, $e := fromJson "[null]"}}{{$e}}|{{.}}{{end}}', "<no value>|<no value>"),
    case('{{range fromJson "[{\\"a\\":1},{\\"a\\":2}]"}}{{.a}}{{end}}', "12"),
    case(
        '{{range fromJson "[null]"}}{{.a}}{{end}}',
        'ERR template: line:1:29: executing "line" at <.a>: nil pointer evaluating interface {}.a',
    ),
    case('{{$x := 0}}{{range fromJson "[1,2]"}}{{$x = .}}{{end}}{{$x}}', "2"),
    case('{{define "T"}}<{{.}}>{{end}}{{template "T" .a}}', "<x>"),
    case('{{define "T"}}<{{.a}}>{{end}}{{template "T" .}}{{template "T"}}', "<x><<no value>>"),
    case('{{block "B" .a}}[{{.}}]{{end}}', "[x]"),
    case(
        '{{template "nope"}}',
        'ERR template: line:1:11: executing "line" at <{{template "nope"}}>: template "nope" not defined',
    ),
    case(
        '{{define "T"}}{{.x.y}}{{end}}{{template "T" .}}',
        'ERR template: line:1:18: executing "T" at <.x.y>: can\'t evaluate field y in type string',
    ),
]

PARSE_ERRORS = [
    case("{{- -}}", 'ERR template: line:1: illegal number syntax: "-"'),
    case(
        "{{" + "(" * 3000 + "1" + ")" * 3000 + "}}",
        "ERR template: line:1: max expression depth exceeded",
        id="deep parens",
    ),
    case("{{f}}", 'ERR template: line:1: function "f" not defined'),
    case("{{.a", "ERR template: line:1: unclosed action"),
    case("{{.a}", "ERR template: line:1: bad character U+007D '}'"),
    case("a\n{{.a\n", "ERR template: line:3: unclosed action started at line:2"),
    case("{{\n.a |\n", "ERR template: line:3: unclosed action started at line:1"),
    case("{{if .a}}x", "ERR template: line:1: unexpected EOF"),
    case("{{end}}", "ERR template: line:1: unexpected {{end}}"),
    case("{{else}}", "ERR template: line:1: unexpected {{else}}"),
    case("{{if}}{{end}}", "ERR template: line:1: missing value for if"),
    case("{{range}}{{end}}", "ERR template: line:1: missing value for range"),
    case("{{with}}{{end}}", "ERR template: line:1: missing value for with"),
    case("{{}}", "ERR template: line:1: missing value for command"),
    case("{{ }}", "ERR template: line:1: missing value for command"),
    case("{{|}}", 'ERR template: line:1: unexpected "|" in command'),
    case('{{.a | "x"}}', "ERR template: line:1: non executable command in pipeline stage 2"),
    case("{{.a | 1}}", "ERR template: line:1: non executable command in pipeline stage 2"),
    case("{{(.a}}", "ERR template: line:1: unclosed left paren"),
    case("{{.a)}}", "ERR template: line:1: unexpected right paren"),
    case('{{"abc}}', "ERR template: line:1: unterminated quoted string"),
    case("{{`abc}}", "ERR template: line:1: unterminated raw quoted string"),
    case("{{'ab}}", "ERR template: line:1: unterminated character constant"),
    case("{{'ab'}}", "ERR template: line:1: malformed character constant: 'ab'"),
    case("{{/* x }}", "ERR template: line:1: unclosed comment"),
    case("{{/* x */ .a}}", "ERR template: line:1: comment ends before closing delimiter"),
    case("{{3x}}", 'ERR template: line:1: bad number syntax: "3x"'),
    case("{{0x}}", 'ERR template: line:1: illegal number syntax: "0x"'),
    case(
        "{{99999999999999999999}}", 'ERR template: line:1: integer overflow: "99999999999999999999"'
    ),
    case("{{.a%}}", "ERR template: line:1: bad character U+0025 '%'"),
    case("{{$x=1}}", "ERR template: line:1: bad character U+003D '='"),
    case("{{$ :}}", "ERR template: line:1: expected :="),
    case("{{a:}}", 'ERR template: line:1: function "a" not defined'),
    case("{{\x01}}", "ERR template: line:1: unrecognized character in action: U+0001"),
    case('{{"\\q"}}', "ERR template: line:1: invalid syntax"),
    case("{{break}}", "ERR template: line:1: {{break}} outside {{range}}"),
    case("{{if true}}{{continue}}{{end}}", "ERR template: line:1: {{continue}} outside {{range}}"),
    case("{{range .a}}{{break 1}}{{end}}", 'ERR template: line:1: unexpected "1" in {{break}}'),
    case(
        "{{range $a, $b, $c := .}}{{end}}", "ERR template: line:1: too many declarations in range"
    ),
    case("{{range $a, 1}}{{end}}", "ERR template: line:1: range can only initialize variables"),
    case("{{$a, $b := .}}", "ERR template: line:1: too many declarations in command"),
    case("{{if .a}}{{else}}{{else}}{{end}}", "ERR template: line:1: expected end; found {{else}}"),
    case("{{range .a}}{{else if .b}}{{end}}", "ERR template: line:1: unexpected <if> in input"),
    case('{{"a".b}}', 'ERR template: line:1: unexpected . after term "\\"a\\""'),
    case("{{1.x}}", 'ERR template: line:1: bad number syntax: "1.x"'),
    case("{{nil.x}}", 'ERR template: line:1: unexpected . after term "nil"'),
    case("{{end x}}", 'ERR template: line:1: unexpected "x" in end'),
    case(
        '{{define "a"}}x{{end}}{{define "a"}}y{{end}}',
        'ERR template: line:1: template: multiple definition of template "a"',
    ),
    case("{{template .a}}", 'ERR template: line:1: unexpected ".a" in template clause'),
    case("{{template .}}", "ERR template: line:1: unexpected <.> in template clause"),
    case("a\nb\n{{.x | nope}}", 'ERR template: line:3: function "nope" not defined'),
]

EXEC_ERRORS = [
    case(
        '{{define "r"}}{{template "r"}}{{end}}{{template "r"}}',
        'ERR template: line:1:25: executing "r" at <{{template "r"}}>: exceeded maximum template depth (100000)',
    ),
    case("{{nil}}", 'ERR template: line:1:2: executing "line" at <nil>: nil is not a command'),
    case(
        "{{1 2}}",
        'ERR template: line:1:2: executing "line" at <1>: can\'t give argument to non-function 1',
    ),
    case(
        "{{.a 2}}",
        'ERR template: line:1:2: executing "line" at <.a>: a is not a method but has arguments',
    ),
    case(
        "{{.a | .b}}",
        'ERR template: line:1:7: executing "line" at <.b>: b is not a method but has arguments',
    ),
    case(
        "{{.a.b}}",
        'ERR template: line:1:4: executing "line" at <.a.b>: can\'t evaluate field b in type string',
    ),
    case(
        "{{ .a.b }}",
        'ERR template: line:1:5: executing "line" at <.a.b>: can\'t evaluate field b in type string',
    ),
    case(
        "{{upper}}",
        'ERR template: line:1:2: executing "line" at <upper>: wrong number of args for upper: want 1 got 0',
    ),
    case(
        '{{upper "a" "b"}}',
        'ERR template: line:1:2: executing "line" at <upper>: wrong number of args for upper: want 1 got 2',
    ),
    case(
        "{{printf}}",
        'ERR template: line:1:2: executing "line" at <printf>: wrong number of args for printf: want at least 1 got 0',
    ),
    case(
        "{{upper 1}}", 'ERR template: line:1:8: executing "line" at <1>: expected string; found 1'
    ),
    case(
        "{{upper true}}",
        'ERR template: line:1:8: executing "line" at <true>: expected string; found true',
    ),
    case(
        "{{upper nil}}",
        'ERR template: line:1:8: executing "line" at <nil>: cannot assign nil to string',
    ),
    case(
        "{{1 | upper}}",
        'ERR template: line:1:6: executing "line" at <upper>: wrong type for value; expected string; got int',
    ),
    case(
        "{{upper (len .a)}}",
        'ERR template: line:1:13: executing "line" at <.a>: wrong type for value; expected string; got int',
    ),
    case(
        "{{upper (add 1 2)}}",
        'ERR template: line:1:15: executing "line" at <2>: wrong type for value; expected string; got int64',
    ),
    case(
        '{{trunc "2" .a}}',
        'ERR template: line:1:8: executing "line" at <"2">: expected integer; found "2"',
    ),
    case(
        "{{trunc 1.5 .a}}",
        'ERR template: line:1:8: executing "line" at <1.5>: expected integer; found 1.5',
    ),
    case(
        "{{trunc .n .a}}",
        'ERR template: line:1:8: executing "line" at <.n>: wrong type for value; expected int; got string',
    ),
    case(
        "{{repeat (add 1 1) .a}}",
        'ERR template: line:1:16: executing "line" at <1>: wrong type for value; expected int; got int64',
    ),
    case("{{repeat (int .n) .a}}", "xxx"),
    case(
        '{{upper (fromJson "bad")}}',
        'ERR template: line:1:18: executing "line" at <"bad">: invalid value; expected string',
    ),
    case(
        '{{unixEpoch "x"}}',
        'ERR template: line:1:12: executing "line" at <"x">: can\'t handle "x" for arg of type time.Time',
    ),
    case(
        "{{unixEpoch .a}}",
        'ERR template: line:1:12: executing "line" at <.a>: wrong type for value; expected time.Time; got string',
    ),
    case(
        "{{.a}}\n  {{upper 2}}",
        'ERR template: line:2:10: executing "line" at <2>: expected string; found 2',
    ),
    case(
        "héllo {{upper 2}}",
        'ERR template: line:1:15: executing "line" at <2>: expected string; found 2',
    ),
]


@pytest.mark.parametrize(("text", "expected"), TEXT_AND_ACTIONS)
def test_text_and_actions(text: str, expected: str) -> None:
    check(text, expected, LABELS)


@pytest.mark.parametrize(("text", "expected"), VARIABLES)
def test_variables(text: str, expected: str) -> None:
    check(text, expected, LABELS)


@pytest.mark.parametrize(("text", "expected"), CONTROL)
def test_control(text: str, expected: str) -> None:
    check(text, expected, LABELS)


@pytest.mark.parametrize(("text", "expected"), PARSE_ERRORS)
def test_parse_errors(text: str, expected: str) -> None:
    check(text, expected, LABELS)


@pytest.mark.parametrize(("text", "expected"), EXEC_ERRORS)
def test_exec_errors(text: str, expected: str) -> None:
    check(text, expected, LABELS)
