"""Readings from a gauge, kept within its scale."""
