"""Regenerate ``svc/config_keys/loki_keys.txt``: the reference's configuration key tree.

    .venv/bin/python -m tests.svc.config.regen_loki_keys /path/to/loki/checkout [commit]

Reads the Go sources of a Loki checkout (its ``pkg/`` and ``vendor/``), starts at the root
config type (``loki.ConfigWrapper``) and follows every exported field the YAML decoder
sees: the key from the ``yaml`` tag (or the lower-cased field name), ``,inline`` fields
merged into their parent, pointers followed, slices and maps of structs descended into.
A type with its own YAML decoding that is not a struct (durations, sizes, CSV lists) is a
leaf; structs with one are descended into (the reference decodes them strictly through a
plain alias). Each line of the output is ``path<TAB>kind[<TAB>Go type]``, with ``[]`` for a
list item and ``{}`` for a map value; kinds are ``struct``, ``list``, ``map``, ``leaf``,
``any`` (anything accepted below) and ``secret`` (masked when the config is printed, with the token given instead of a type).
Only key names and type names are extracted; no code is copied.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT_PACKAGE = "github.com/grafana/loki/v3/pkg/loki"
ROOT_TYPE = "ConfigWrapper"
OUTPUT = Path(__file__).resolve().parents[3] / "svc" / "config_keys" / "loki_keys.txt"
SECRET_TYPES = {
    ("github.com/grafana/dskit/flagext", "Secret"): "********",
    ("github.com/prometheus/common/config", "Secret"): "<secret>",
}
_BUILTIN = {
    "string", "bool", "byte", "rune", "int", "int8", "int16", "int32", "int64", "uint",
    "uint8", "uint16", "uint32", "uint64", "uintptr", "float32", "float64", "complex64",
    "complex128", "error",
}  # fmt: skip


@dataclass
class GoType:
    """One ``type Name <expr>`` declaration."""

    package: str
    name: str
    expr: str
    plain_alias: str | None = None
    custom_yaml: bool = False
    structured: bool = True


@dataclass
class Package:
    """The declarations and imports of one Go package directory."""

    path: str
    name: str = ""
    types: dict[str, GoType] = field(default_factory=dict)
    imports: dict[str, dict[str, str]] = field(default_factory=dict)
    type_file: dict[str, str] = field(default_factory=dict)


def _strip_comments(src: str) -> str:
    """Go source without comments; strings, runes and raw strings are kept intact."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif c in "\"'`":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if c != "`" and src[j] == "\\" else 1
            out.append(src[i : j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _matching(src: str, start: int, open_: str = "{", close: str = "}") -> int:
    """Index just past the bracket closing the one at ``start``."""
    depth, i = 0, start
    while i < len(src):
        c = src[i]
        if c in "\"'`":
            j = i + 1
            while j < len(src) and src[j] != c:
                j += 2 if c != "`" and src[j] == "\\" else 1
            i = j + 1
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced brackets")


_IMPORT_LINE = re.compile(r'^\s*(?:([\w.]+)\s+)?"([^"]+)"\s*$')


def _imports(src: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for match in re.finditer(r"^import\s*\((.*?)^\)", src, re.MULTILINE | re.DOTALL):
        for line in match.group(1).splitlines():
            m = _IMPORT_LINE.match(line)
            if m:
                found[m.group(1) or ""] = found.get(m.group(1) or "", "") + "\0" + m.group(2)
    for m in re.finditer(r'^import\s+(?:([\w.]+)\s+)?"([^"]+)"', src, re.MULTILINE):
        found[m.group(1) or ""] = found.get(m.group(1) or "", "") + "\0" + m.group(2)
    out: dict[str, str] = {}
    for alias, paths in found.items():
        for path in paths.split("\0")[1:]:
            if alias in ("", "_", "."):
                out.setdefault("\0" + path, path)
            else:
                out[alias] = path
    return out


class Source:
    """The Go packages of a Loki checkout, parsed on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._pending: dict[str, dict[str, tuple[str, str]]] = {}

    def directory(self, path: str) -> Path | None:
        for candidate in (
            self.root / path.removeprefix("github.com/grafana/loki/v3/"),
            self.root / "vendor" / path,
            self.root / path.removeprefix("github.com/grafana/loki/"),
        ):
            if candidate.is_dir() and any(candidate.glob("*.go")):
                return candidate
        return None

    @cache  # noqa: B019 - one Source per run
    def package(self, path: str) -> Package | None:
        directory = self.directory(path)
        if directory is None:
            return None
        pkg = Package(path)
        for file in sorted(directory.glob("*.go")):
            if file.name.endswith("_test.go"):
                continue
            src = _strip_comments(file.read_text(errors="replace"))
            if re.search(r"^//go:build ignore", src, re.MULTILINE):
                continue
            m = re.search(r"^package (\w+)", src, re.MULTILINE)
            if m is None:
                continue
            pkg.name = pkg.name or m.group(1)
            imports = _imports(src)
            pkg.imports[file.name] = imports
            self._types(src, pkg, file.name)
            self._methods(src, pkg)
        return pkg

    def _types(self, src: str, pkg: Package, file: str) -> None:
        decls: list[str] = []
        for m in re.finditer(r"^type\s*\(", src, re.MULTILINE):
            end = _matching(src, m.end() - 1, "(", ")")
            decls += _group_decls(src[m.end() : end - 1])
        for m in re.finditer(r"^type\s+(\w+)", src, re.MULTILINE):
            decls.append(_decl_at(src, m.start() + len("type")))
        for decl in decls:
            dm = re.match(r"\s*(\w+)\s*(\[[^\]]*\])?\s*(=)?\s*(.*)$", decl, re.DOTALL)
            if dm is None:
                continue
            name, expr = dm.group(1), dm.group(4).strip()
            if name not in pkg.types:
                pkg.types[name] = GoType(pkg.path, name, expr)
                pkg.type_file[name] = file

    def _methods(self, src: str, pkg: Package) -> None:
        pattern = (
            r"^func\s*\(\s*\w*\s*\*?\s*(\w+)(?:\[[^\]]*\])?\s*\)\s*(UnmarshalYAML|UnmarshalText)\b"
        )
        for m in re.finditer(pattern, src, re.MULTILINE):
            brace = src.find("{", m.end())
            body = src[brace : _matching(src, brace)]
            pending = self._pending.setdefault(pkg.path, {})
            pending[m.group(1)] = (m.group(2), body)

    def lookup(self, package: str, name: str) -> GoType | None:
        pkg = self.package(package)
        if pkg is None or name not in pkg.types:
            return None
        go_type = pkg.types[name]
        method = self._pending.get(package, {}).get(name)
        if method is not None:
            go_type.custom_yaml = True
            alias = re.search(r"\btype\s+(\w+)\s+" + re.escape(name) + r"\b", method[1])
            go_type.plain_alias = alias.group(1) if alias else None
            # Decoding into a converted pointer ``(*plain)(cfg)`` keeps the struct's keys;
            # any other custom decoding reads something else (a scalar, say).
            go_type.structured = bool(re.search(r"\(\*[\w.]+\)\(\w+\)", method[1]))
            # Or decoding into a local anonymous struct, whose keys are then the type's.
            local = re.search(r":=\s*struct\s*\{", method[1])
            if local is not None:
                brace = method[1].index("{", local.start())
                go_type.expr = method[1][local.start() + 2 : _matching(method[1], brace)].strip()
                go_type.structured = True
            if method[0] == "UnmarshalText":
                go_type.expr = "string"
        return go_type

    def resolve_import(self, pkg: Package, type_name: str, qualifier: str) -> str | None:
        file = pkg.type_file.get(type_name)
        files = [pkg.imports[file]] if file in pkg.imports else list(pkg.imports.values())
        for imports in files:
            if qualifier in imports:
                return imports[qualifier]
            for key, path in imports.items():
                if key.startswith("\0"):
                    dep = self.package(path)
                    if dep is not None and dep.name == qualifier:
                        return path
        return None


def _decl_at(src: str, start: int) -> str:
    """The text of a top-level declaration starting at ``start`` (after ``type``)."""
    i = start
    while i < len(src) and src[i] != "\n":
        if src[i] == "{":
            i = _matching(src, i)
            continue
        i += 1
    return src[start:i]


def _group_decls(body: str) -> list[str]:
    decls, i, start = [], 0, 0
    while i < len(body):
        if body[i] == "{":
            i = _matching(body, i)
            continue
        if body[i] == "\n":
            if body[start:i].strip():
                decls.append(body[start:i])
            start = i + 1
        i += 1
    if body[start:].strip():
        decls.append(body[start:])
    return decls


def _split_fields(body: str) -> list[str]:
    out, i, start, depth = [], 0, 0, 0
    while i < len(body):
        c = body[i]
        if c in "\"'`":
            j = i + 1
            while j < len(body) and body[j] != c:
                j += 2 if c != "`" and body[j] == "\\" else 1
            i = j + 1
            continue
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c in "\n;" and depth == 0:
            out.append(body[start:i].strip())
            start = i + 1
        i += 1
    out.append(body[start:].strip())
    return [f for f in out if f]


@dataclass
class Field:
    """One struct field as the YAML decoder sees it."""

    key: str
    type_expr: str
    inline: bool


def _fields(struct_body: str) -> list[Field]:
    fields = []
    for decl in _split_fields(struct_body):
        tag = ""
        m = re.search(r"`([^`]*)`\s*$", decl) or re.search(r'"((?:[^"\\]|\\.)*)"\s*$', decl)
        if m:
            tag, decl = m.group(1), decl[: m.start()].strip()
        yaml_tag = re.search(r'yaml:"([^"]*)"', tag)
        options = yaml_tag.group(1).split(",") if yaml_tag else [""]
        if options[0] == "-":
            continue
        named = re.match(r"^(\w+(?:\s*,\s*\w+)*)\s+(\S.*)$", decl, re.DOTALL)
        if named and not re.match(r"^[\w.]+$", decl):
            names = [n.strip() for n in named.group(1).split(",")]
            type_expr = named.group(2).strip()
        else:
            type_expr = decl.strip()
            names = [type_expr.lstrip("*").split(".")[-1].split("[")[0]]
        for name in names:
            if not name[:1].isupper():
                continue
            fields.append(Field(options[0] or name.lower(), type_expr, "inline" in options[1:]))
    return fields


@dataclass
class Node:
    """A node of the key tree."""

    kind: str
    go_type: str
    children: dict[str, Node] = field(default_factory=dict)
    item: Node | None = None


class Walker:
    """Builds the key tree from the root type."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.stack: list[tuple[str, str]] = []

    def named(self, package: str, name: str) -> Node:
        secret = SECRET_TYPES.get((package, name))
        pkg = self.source.package(package)
        qualified = f"{pkg.name if pkg else package.rsplit('/', 1)[-1]}.{name}"
        if secret is not None:
            return Node("secret", secret)
        go_type = self.source.lookup(package, name)
        if go_type is None:
            return Node("leaf" if "." not in package.split("/")[0] else "any", qualified)
        if (package, name) in self.stack:
            return Node("any", qualified)
        self.stack.append((package, name))
        try:
            expr = go_type.expr
            if go_type.custom_yaml and not go_type.structured:
                return Node("leaf", qualified)
            if go_type.custom_yaml and not expr.startswith("struct"):
                under = self.expr(expr, package, name)
                if under.kind != "struct":
                    return Node("leaf", qualified)
                return Node("struct", qualified, under.children)
            node = self.expr(expr, package, name)
            if node.kind == "struct":
                shown = f"{qualified.split('.')[0]}.{go_type.plain_alias}" if (
                    go_type.plain_alias) else qualified  # fmt: skip
                return Node("struct", shown, node.children)
            return node if node.kind in ("list", "map", "any") else Node("leaf", qualified)
        finally:
            self.stack.pop()

    def expr(self, expr: str, package: str, context: str) -> Node:
        expr = expr.strip()
        if expr.startswith("*"):
            return self.expr(expr[1:], package, context)
        if expr.startswith("[]") or re.match(r"^\[\w+\]", expr):
            inner = expr[expr.index("]") + 1 :]
            if inner.strip() == "byte":
                return Node("leaf", "[]byte")
            return Node("list", "[]", item=self.expr(inner, package, context))
        if expr.startswith("map["):
            end = _matching(expr, 3, "[", "]")
            return Node("map", "map", item=self.expr(expr[end:], package, context))
        if expr.startswith("struct"):
            brace = expr.index("{")
            body = expr[brace + 1 : _matching(expr, brace) - 1]
            return self.struct(body, package, context)
        if expr.startswith(("interface", "any")) and re.match(r"^(interface\s*\{|any\b)", expr):
            return Node("any", "interface {}")
        if expr.startswith(("func", "chan")):
            return Node("any", expr.split("(")[0])
        m = re.match(r"^(?:(\w+)\.)?(\w+)", expr)
        if m is None:
            return Node("any", expr)
        qualifier, name = m.group(1), m.group(2)
        if qualifier is None:
            if name in _BUILTIN:
                return Node("leaf", name)
            return self.named(package, name)
        pkg = self.source.package(package)
        assert pkg is not None
        target = self.source.resolve_import(pkg, context, qualifier)
        if target is None or "." not in target.split("/")[0]:
            return Node("leaf", f"{qualifier}.{name}")
        return self.named(target, name)

    def struct(self, body: str, package: str, context: str) -> Node:
        node = Node("struct", "")
        for f in _fields(body):
            child = self.expr(f.type_expr, package, context)
            if f.inline and child.kind == "struct":
                node.children.update(child.children)
            elif f.inline and child.kind == "map":
                node.children["*"] = child.item or Node("any", "")
            else:
                node.children.setdefault(f.key, child)
        return node


def _lines(node: Node, path: str) -> list[str]:
    shown = f"\t{node.go_type}" if node.kind in ("struct", "secret") else ""
    out = [f"{path or '.'}\t{node.kind}{shown}"]
    for key, child in node.children.items():
        out += _lines(child, f"{path}.{key}" if path else key)
    if node.item is not None:
        out += _lines(node.item, f"{path}{'[]' if node.kind == 'list' else '{}'}")
    return out


def main(argv: list[str]) -> int:
    """Write the key tree of the checkout at ``argv[0]``."""
    root = Path(argv[0])
    commit = argv[1] if len(argv) > 1 else subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip() or "unknown"  # fmt: skip
    tree = Walker(Source(root)).named(ROOT_PACKAGE, ROOT_TYPE)
    header = [
        "# The reference's configuration keys (grafana/loki " + commit + "), generated by",
        "# `python -m tests.svc.config.regen_loki_keys <loki checkout>`: path, kind, Go type.",
    ]
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text("\n".join(header + _lines(tree, "")) + "\n")
    print(f"{OUTPUT}: {len(_lines(tree, ''))} keys")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
