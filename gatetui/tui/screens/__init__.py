"""The main screen, the review screen and the dialogs."""
