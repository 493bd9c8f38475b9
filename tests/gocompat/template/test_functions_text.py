"""String functions: case, trim, padding, regex, URL, base64, JSON, default."""

from __future__ import annotations

import pytest

from tests.gocompat.template.helpers import case, check

LABELS = {"a": "x", "e": "", "s": "héllo", "j": '{"a":[1,2],"b":{"c":"d"}}'}


def err(position: str, context: str, message: str) -> str:
    return f'ERR template: line:1:{position}: executing "line" at <{context}>: {message}'


TEXT = [
    case('{{lower "ÀB"}} {{upper "straße"}} {{ToUpper "é"}} {{ToLower "ÉA"}}', "àb STRAßE É éa"),
    case(
        '{{title "hello world"}}|{{title "élan vital"}}|{{title "o\'neil x.y"}}|{{title "ab1c d"}}',
        "Hello World|Élan Vital|O'Neil X.Y|Ab1c D",
    ),
    case('{{trim "  a b \\n"}}|{{TrimSpace "\\t a \\u00a0"}}', "a b|a"),
    case('{{trimAll "x" "xxaxx"}}|{{trimAll "xy" "xyaxy"}}|{{trimAll "" " a "}}', "a|a| a "),
    case('{{trimPrefix "a" "aab"}}|{{trimSuffix "b" "abb"}}|{{trimPrefix "z" "ab"}}', "ab|ab|ab"),
    case('{{replace "a" "b" "banana"}}|{{replace "" "-" "ab"}}', "bbnbnb|-a-b-"),
    case(
        '{{Replace "banana" "a" "o" 2}}|{{Replace "banana" "a" "o" -1}}|{{Replace "banana" "a" "o" 0}}',
        "bonona|bonono|banana",
    ),
    case('{{Trim "xxaxx" "x"}}|{{TrimLeft "xxaxx" "x"}}|{{TrimRight "xxaxx" "x"}}', "a|axx|xxa"),
    case('{{TrimPrefix "prefix-a" "prefix-"}}|{{TrimSuffix "a.log" ".log"}}', "a|a"),
    case(
        '{{trunc 3 "abcdef"}}|{{trunc -2 "abcdef"}}|{{trunc 10 "abc"}}|{{trunc -10 "abc"}}|{{trunc 0 "abc"}}',
        "abc|ef|abc|abc|",
    ),
    case(
        '{{substr 1 3 "abcdef"}}|{{substr -1 2 "abcdef"}}|{{substr 2 -1 "abcdef"}}|{{substr 2 100 "abcdef"}}',
        "bc|ab|cdef|cdef",
    ),
    case(
        '{{substr 4 2 "abcdef"}}',
        err(
            "2",
            'substr 4 2 "abcdef"',
            "error calling substr: runtime error: slice bounds out of range [4:2]",
        ),
    ),
    case(
        '{{substr 10 20 "abc"}}',
        err(
            "2",
            'substr 10 20 "abc"',
            "error calling substr: runtime error: slice bounds out of range [10:3]",
        ),
    ),
    case(
        '{{substr -1 5 "abc"}}',
        err(
            "2",
            'substr -1 5 "abc"',
            "error calling substr: runtime error: slice bounds out of range [:5] with length 3",
        ),
    ),
    case("{{substr 0 2 .s}}|{{trunc 1 .s}}", "h\ufffd|h"),
    case(
        '{{alignLeft 5 "ab"}}|{{alignLeft 2 "abcd"}}|{{alignRight 2 "abcd"}}|{{alignLeft -1 "ab"}}|{{alignRight 3 "é"}}',
        "ab   |ab|cd|ab|  é",
    ),
    case("{{alignLeft 2 .s}}|{{alignRight 2 .s}}", "hé|lo"),
    case(
        '{{indent 2 "a\\nb"}}|{{nindent 2 "a"}}|{{repeat 3 "ab"}}|{{repeat 0 "a"}}',
        "  a\n  b|\n  a|ababab|",
    ),
    case(
        '{{repeat -1 "a"}}',
        err("2", 'repeat -1 "a"', "error calling repeat: strings: negative Repeat count"),
    ),
    case(
        '{{contains "b" "abc"}} {{hasPrefix "a" "abc"}} {{hasSuffix "a" "abc"}} {{contains "" ""}}',
        "true true false true",
    ),
    case(
        '{{default "d" ""}}|{{default "d" "v"}}|{{default "d" 0}}|{{default "d" 1}}|{{default "d" false}}|{{default "d"}}',
        "d|v|d|1|d|d",
    ),
    case(
        '{{default "d" .missing}}|{{default "d" (fromJson "[]")}}|{{default 5 nil}}|{{.a | default "d"}}|{{default "d" 0.0}}',
        "d|d|5|x|d",
    ),
    case('{{default "d" __timestamp__}}', "2026-11-25 22:20:06 +0000 UTC"),
    case('{{urlencode "é/~_-. +"}}|{{urldecode "a+b%26c%C3%A9"}}', "%C3%A9%2F~_-.+%2B|a b&cé"),
    case(
        '{{urldecode "%zz"}}',
        err("2", 'urldecode "%zz"', 'error calling urldecode: invalid URL escape "%zz"'),
    ),
    case(
        '{{urldecode "ab%4"}}',
        err("2", 'urldecode "ab%4"', 'error calling urldecode: invalid URL escape "%4"'),
    ),
    case('{{b64enc "hi"}}|{{b64enc "é"}}|{{b64dec "aGk="}}|{{b64dec "w6k"}}', "aGk=|w6k=|hi|é"),
    case(
        '{{b64dec "a"}}|{{b64dec "!!!!"}}|{{b64dec "aG=k"}}',
        "illegal base64 data at input byte 1|illegal base64 data at input byte 0|illegal base64 data at input byte 3",
    ),
    case(
        '{{regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W"}}|{{regexReplaceAll "a(x*)b" "-ab-axxb-" "$1W"}}',
        "-W-xxW-|---",
    ),
    case('{{regexReplaceAllLiteral "a(x*)b" "-ab-axxb-" "$1"}}', "-$1-$1-"),
    case('{{regexReplaceAll "a*" "baaac" "-"}}|{{regexReplaceAll "" "abc" "-"}}', "-b-c-|-a-b-c-"),
    case(
        '{{regexReplaceAll "(?P<first>\\\\w+) (\\\\w+)" "hello world" "$2 $first"}}', "world hello"
    ),
    case(
        '{{regexReplaceAll "(?<first>\\\\w+) (\\\\w+)" "hello world" "${2}_$first $$ $"}}',
        "world_hello $ $",
    ),
    case(
        '{{regexReplaceAll "$" "ab" "!"}}|{{regexReplaceAll "b$" "ab\\n" "!"}}|{{regexReplaceAll "(?m)b$" "ab\\nb" "!"}}',
        "ab!|ab\n|a!\n!",
    ),
    case(
        '{{regexReplaceAll "\\\\d" "a1٣" "#"}}|{{regexReplaceAll "(?i)A" "aA" "x"}}|{{regexReplaceAll "[[:digit:]]+" "a12b" "#"}}',
        "a#٣|xx|a#b",
    ),
    case(
        '{{regexReplaceAll "\\\\Qa.b\\\\E" "a.b axb" "#"}}|{{regexReplaceAll "[^\\\\s]+" "ab cd" "#"}}',
        "# axb|# #",
    ),
    case(
        '{{regexReplaceAll "(" "x" "y"}}',
        err(
            "2",
            'regexReplaceAll "(" "x" "y"',
            "error calling regexReplaceAll: error parsing regexp: missing closing ): `(`",
        ),
    ),
    case(
        '{{regexReplaceAll "a(?=b)" "ab" "x"}}',
        err(
            "2",
            'regexReplaceAll "a(?=b)" "ab" "x"',
            "error calling regexReplaceAll: error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
        ),
    ),
    case(
        '{{regexReplaceAll "(a)\\\\1" "aa" "x"}}',
        err(
            "2",
            'regexReplaceAll "(a)\\\\1" "aa" "x"',
            "error calling regexReplaceAll: error parsing regexp: invalid escape sequence: `\\1`",
        ),
    ),
    case(
        '{{count "a" "banana"}} {{count "" "abc"}} {{count "a*" "baaac"}} {{count "z" "abc"}}',
        "3 4 3 0",
    ),
    case(
        '{{count "[" "x"}}',
        err(
            "2",
            'count "[" "x"',
            "error calling count: error parsing regexp: missing closing ]: `[`",
        ),
    ),
    case(
        "{{(fromJson .j).a}}|{{(fromJson .j).b.c}}|{{fromJson .j}}",
        "[1 2]|d|map[a:[1 2] b:map[c:d]]",
    ),
    case(
        '{{fromJson "bad"}}|{{fromJson "null"}}|{{fromJson "[1,null]"}}|{{fromJson "3"}}|{{fromJson "\\"s\\""}}',
        "<no value>|<no value>|[1 <nil>]|3|s",
    ),
    case(
        '{{fromJson "12345678"}}|{{fromJson "true"}}|{{fromJson "NaN"}}|{{fromJson "1e400"}}|{{fromJson "[1,]"}}',
        "1.2345678e+07|true|<no value>|<no value>|<no value>",
    ),
    case("{{(fromJson .j).a | len}} {{index (fromJson .j).a 1}}", "2 2"),
]


@pytest.mark.parametrize(("text", "expected"), TEXT)
def test_text_function(text: str, expected: str) -> None:
    check(text, expected, LABELS)
