"""Reading the repository through dulwich: refs, trees, diffs, exports, blob
streams. Knows nothing of the gate."""
