"""The main screen, the review screen, the rules lab and the dialogs."""
