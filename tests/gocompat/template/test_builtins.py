"""Go's predefined functions: and or not len index slice print println eq ne lt le gt ge
html js urlquery call."""

from __future__ import annotations

import pytest

from tests.gocompat.template.helpers import case, check

LABELS = {"a": "x", "e": "", "n": "3", "s": "héllo"}


def err(position: str, context: str, message: str) -> str:
    return f'ERR template: line:1:{position}: executing "line" at <{context}>: {message}'


BUILTINS = [
    case('{{and 1 0 2}} {{and 1 2}} {{or 0 "" 3}} {{or 0 false}}', "0 2 3 false"),
    case("{{and}}", err("2", "and", "wrong number of args for and: want at least 1 got 0")),
    case("{{and .e (index .x 5)}}|{{or .a (index .e 5)}}", "|x"),
    case("{{.e | and 1}}|{{.a | or 0}}", "|x"),
    case("{{and 1 nil}}", "<no value>"),
    case("{{not 0}} {{not .a}} {{not .e}} {{not nil}}", "true false true true"),
    case('{{len .a}} {{len .s}} {{len .}} {{len (fromJson "[1,2]")}}', "1 6 4 2"),
    case("{{len 3}}", err("2", "len 3", "error calling len: len of type int")),
    case(
        '{{len (fromJson "bad")}}',
        err(
            "2",
            'len (fromJson "bad")',
            "error calling len: reflect: call of reflect.Value.Type on zero Value",
        ),
    ),
    case('{{index . "a"}}|{{index . "zz"}}|{{index .s 0}}', "x||104"),
    case("{{index .s 9}}", err("2", "index .s 9", "error calling index: index out of range: 9")),
    case("{{index .s 6}}", err("2", "index .s 6", "error calling index: index out of range: 6")),
    case('{{index (fromJson "[1,[2,3]]") 1 0}}', "2"),
    case('{{index (fromJson "{\\"a\\":{\\"b\\":5}}") "a" "b"}}', "5"),
    case('{{index (fromJson "{}") "a"}}', "<no value>"),
    case(
        '{{index (fromJson "{}") "a" "b"}}',
        err("2", 'index (fromJson "{}") "a" "b"', "error calling index: index of nil pointer"),
    ),
    case(
        "{{index 3 0}}", err("2", "index 3 0", "error calling index: can't index item of type int")
    ),
    case(
        '{{index (fromJson "[1]") "a"}}',
        err(
            "2",
            'index (fromJson "[1]") "a"',
            "error calling index: cannot index slice/array with type string",
        ),
    ),
    case(
        '{{index (fromJson "[1]") -1}}',
        err("2", 'index (fromJson "[1]") -1', "error calling index: index out of range: -1"),
    ),
    case(
        "{{index . 1}}",
        err("2", "index . 1", "error calling index: value has type int; should be string"),
    ),
    case("{{index nil 1}}", err("2", "index nil 1", "error calling index: index of untyped nil")),
    case("{{index .a}}", "x"),
    case('{{slice .s 1 3}}|{{slice .a 0 1}}|{{slice "abc" 1}}|{{slice "abc"}}', "é|x|bc|abc"),
    case(
        '{{slice "abc" 2 1}}',
        err("2", 'slice "abc" 2 1', "error calling slice: invalid slice index: 2 > 1"),
    ),
    case(
        '{{slice "abc" 0 4}}',
        err("2", 'slice "abc" 0 4', "error calling slice: index out of range: 4"),
    ),
    case(
        '{{slice "abc" 0 1 2}}',
        err("2", 'slice "abc" 0 1 2', "error calling slice: cannot 3-index slice a string"),
    ),
    case('{{slice (fromJson "[1,2,3]") 1}}', "[2 3]"),
    case('{{slice (fromJson "[1,2,3]") 0 1 2}}', "[1]"),
    case("{{slice 3}}", err("2", "slice 3", "error calling slice: can't slice item of type int")),
    case('{{print 1 2 "a" "b" 3}}|{{print "a" 1}}|{{print nil}}|{{print}}', "1 2ab3|a1|<nil>|"),
    case("{{print 1.5 true .}}", "1.5 true map[a:x e: n:3 s:héllo]"),
    case('{{println 1 "a"}}', "1 a\n"),
    case(
        '{{eq .a "x"}} {{eq .a "y" "x"}} {{eq 1 1}} {{eq 1.5 1.5}} {{eq true true}}',
        "true true true true true",
    ),
    case(
        "{{eq (len .a) 1}} {{eq (add 1 1) 2}} {{eq (index .s 0) 104}} {{eq 104 (index .s 0)}}",
        "true true true true",
    ),
    case(
        "{{eq 1 1.0}}",
        err(
            "2", "eq 1 1.0", "error calling eq: incompatible types for comparison: int and float64"
        ),
    ),
    case("{{eq .a}}", err("2", "eq .a", "error calling eq: missing argument for comparison")),
    case('{{eq .a nil}} {{eq (fromJson "bad") .a}}', "false false"),
    case(
        '{{eq "a" "b" 1}}',
        err(
            "2",
            'eq "a" "b" 1',
            "error calling eq: incompatible types for comparison: string and int",
        ),
    ),
    case('{{eq "a" "a" 1}}', "true"),
    case('{{ne 1 2}} {{ne "a" "a"}}', "true false"),
    case(
        '{{ne "a" 1}}',
        err("2", 'ne "a" 1', "error calling ne: incompatible types for comparison: string and int"),
    ),
    case(
        '{{eq (fromJson "[1]") (fromJson "[1]")}}',
        err(
            "2",
            'eq (fromJson "[1]") (fromJson "[1]")',
            "error calling eq: non-comparable type [%!s(float64=1)]: []interface {}",
        ),
    ),
    case(
        '{{lt 1 2}} {{lt "a" "b"}} {{lt 1.5 2.5}} {{le 2 2}} {{gt 3 2}} {{ge 2 3}} {{lt "b" "a"}}',
        "true true true true true false false",
    ),
    case(
        "{{lt 1 2.5}}",
        err(
            "2", "lt 1 2.5", "error calling lt: incompatible types for comparison: int and float64"
        ),
    ),
    case(
        "{{lt true false}}",
        err("2", "lt true false", "error calling lt: invalid type for comparison"),
    ),
    case(
        '{{lt (fromJson "[1]") 1}}',
        err("2", 'lt (fromJson "[1]") 1', "error calling lt: invalid type for comparison"),
    ),
    case("{{lt (index .s 0) 200}} {{gt -1 (index .s 0)}}", "true false"),
    case('{{html "<a href=\\"x\\">&\'"}}', "&lt;a href=&#34;x&#34;&gt;&amp;&#39;"),
    case("{{html 1 2}} {{html nil}}", "1 2 &lt;no value&gt;"),
    case('{{js "a\'b\\"c<>&=\\\\"}}', "a\\'b\\\"c\\u003C\\u003E\\u0026\\u003D\\\\"),
    case('{{js "é\\n\\t"}}', "é\\u000A\\u0009"),
    case('{{urlquery "a b/c?d=é"}}', "a+b%2Fc%3Fd%3D%C3%A9"),
    case("{{call .a}}", err("2", "call .a", "error calling call: non-function .a of type string")),
    case(
        "{{call .missing 1}}",
        err("2", "call .missing 1", "error calling call: non-function .missing of type string"),
    ),
]


@pytest.mark.parametrize(("text", "expected"), BUILTINS)
def test_builtin(text: str, expected: str) -> None:
    check(text, expected, LABELS)
