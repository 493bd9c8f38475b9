"""LogQL syntax: tokens, lexer, parser, the typed AST, validation and printers (pure)."""
