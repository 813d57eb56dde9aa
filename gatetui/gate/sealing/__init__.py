"""Base's sealed files put back over head, the digests that name exactly what a verdict judged, and head's links where the gate writes."""
