"""Operations: internal service lifecycle, metrics, index sync, shutdown, cache generations."""
