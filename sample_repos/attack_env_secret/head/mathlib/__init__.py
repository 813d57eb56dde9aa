"""Small arithmetic helpers."""
