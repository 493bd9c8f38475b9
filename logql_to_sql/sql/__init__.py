"""LogQL AST -> SQL: log pipelines, range and vector aggregations over ``logs``/``streams``."""
